//! A connector's one capability: a read-only HTTP fetch. The sandbox
//! applies the manifest's policy to each request the guest makes (and to
//! each redirect hop), counts it against the call's fetch cap and bounds its
//! time; the host's [`Fetch`] only sends what was admitted, one hop at a
//! time, with the user's credential (`quarry::connectors::upstream`). So no
//! implementation of [`Fetch`] can send a request the policy refused. The
//! sandbox itself has no network.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::StreamExt;
use quarry_guard::manifest::{Manifest, Method, SandboxLimits};
use quarry_guard::policy::{self, Admitted, Denied, GuestRequest};
use quarry_secret::Secret;

/// Most redirects one fetch follows.
const MAX_REDIRECTS: usize = 5;

/// A response returned to the guest.
#[derive(Debug, Clone)]
pub struct GuestResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl GuestResponse {
    /// The first value of a header, by case-insensitive name.
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    Denied(String),
    LimitExceeded(String),
    Timeout,
    Network(String),
}

impl From<Denied> for FetchError {
    fn from(d: Denied) -> Self {
        FetchError::Denied(d.0)
    }
}

/// What one connector call may still do.
pub struct FetchBudget {
    pub manifest: Arc<Manifest>,
    pub limits: SandboxLimits,
    pub credential: Option<Secret>,
    pub used: u32,
}

/// A fetch on its way (boxed: the sandbox holds the host's [`Fetch`] as a
/// trait object).
pub type Fetching<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The host's side of the guest's `http` import: the network.
pub trait Fetch: Send + Sync + 'static {
    /// Sends one request the policy admitted, with the call's credential
    /// where the manifest puts it, and reads at most
    /// `budget.limits.max_response_bytes` of the answer. One hop: a
    /// redirect is returned as it is (the sandbox admits the next hop).
    fn send<'a>(
        &'a self,
        budget: &'a FetchBudget,
        request: &'a Admitted,
    ) -> Fetching<'a, Result<GuestResponse, FetchError>>;
}

/// No network: every fetch is refused. The default, for a runtime that
/// only compiles and inspects components (`quarry connector check`).
pub struct NoNetwork;

impl Fetch for NoNetwork {
    fn send<'a>(
        &'a self,
        _budget: &'a FetchBudget,
        _request: &'a Admitted,
    ) -> Fetching<'a, Result<GuestResponse, FetchError>> {
        Box::pin(async { Err(FetchError::Denied("this runtime has no network".into())) })
    }
}

/// Sends one guest request under the connector's policy and the call's
/// caps, following redirects (each hop admitted anew).
pub(crate) async fn fetch(
    network: &dyn Fetch,
    budget: &mut FetchBudget,
    request: GuestRequest,
) -> Result<GuestResponse, FetchError> {
    if budget.used >= budget.limits.max_fetches {
        return Err(FetchError::LimitExceeded(format!(
            "this search already made {} fetches, the most allowed",
            budget.limits.max_fetches
        )));
    }
    // Only requests that may leave count: a refused one costs the upstream
    // nothing, and the call's deadline bounds a guest that keeps asking.
    let admitted = policy::admit(&budget.manifest, request)?;
    budget.used += 1;
    within_deadline(network, budget, admitted).await
}

/// Sends a batch of independent guest requests concurrently, each under
/// exactly what [`fetch`] applies, and returns one result per request in
/// the order given.
///
/// Requests the policy refuses are answered `Denied` on their own and cost
/// nothing, as with a single fetch. The admitted ones are counted against
/// the call's fetch cap before any of them leaves: if they do not all fit
/// in what remains, none is sent and each is answered `LimitExceeded` (the
/// batch is refused whole, never cut). At most the call's
/// `max_concurrent_fetches` (at least one) are outstanding at once.
pub(crate) async fn fetch_many(
    network: &dyn Fetch,
    budget: &mut FetchBudget,
    requests: Vec<GuestRequest>,
) -> Vec<Result<GuestResponse, FetchError>> {
    let admitted: Vec<Result<Admitted, FetchError>> = requests
        .into_iter()
        .map(|request| policy::admit(&budget.manifest, request).map_err(FetchError::from))
        .collect();
    let wanted = admitted.iter().filter(|a| a.is_ok()).count() as u64;
    let remaining = u64::from(budget.limits.max_fetches.saturating_sub(budget.used));
    if wanted > remaining {
        let why = format!(
            "this batch needs {wanted} fetches and the search has {remaining} left of {}; none was sent",
            budget.limits.max_fetches
        );
        return admitted
            .into_iter()
            .map(|a| a.and(Err(FetchError::LimitExceeded(why.clone()))))
            .collect();
    }
    budget.used += wanted as u32;
    let budget: &FetchBudget = budget;
    let in_flight = budget.limits.max_concurrent_fetches.max(1) as usize;
    futures::stream::iter(admitted)
        .map(|admitted| async move { within_deadline(network, budget, admitted?).await })
        .buffered(in_flight)
        .collect()
        .await
}

async fn within_deadline(
    network: &dyn Fetch,
    budget: &FetchBudget,
    admitted: Admitted,
) -> Result<GuestResponse, FetchError> {
    let deadline = budget.limits.fetch_timeout();
    match tokio::time::timeout(deadline, follow(network, budget, admitted)).await {
        Ok(result) => result,
        Err(_) => Err(FetchError::Timeout),
    }
}

async fn follow(
    network: &dyn Fetch,
    budget: &FetchBudget,
    mut request: Admitted,
) -> Result<GuestResponse, FetchError> {
    for _ in 0..=MAX_REDIRECTS {
        let response = network.send(budget, &request).await?;
        let Some(next) = redirect_target(&request, &response)? else {
            return Ok(response);
        };
        tracing::debug!(connector = %budget.manifest.id, "following a redirect");
        request = policy::admit(&budget.manifest, next)
            .map_err(|d| FetchError::Denied(format!("redirect refused: {d}")))?;
    }
    Err(FetchError::Denied(format!(
        "more than {MAX_REDIRECTS} redirects"
    )))
}

/// The request a redirect asks for, if `response` is one.
fn redirect_target(
    request: &Admitted,
    response: &GuestResponse,
) -> Result<Option<GuestRequest>, FetchError> {
    if !matches!(response.status, 301 | 302 | 303 | 307 | 308) {
        return Ok(None);
    }
    let Some(location) = response.header("location") else {
        return Ok(None);
    };
    let next = request
        .url
        .join(location)
        .map_err(|e| FetchError::Denied(format!("redirect Location does not parse: {e}")))?;
    // 307/308 repeat the request as it was; the others become a GET.
    let keep_method = matches!(response.status, 307 | 308);
    Ok(Some(GuestRequest {
        method: if keep_method {
            request.method
        } else {
            Method::Get
        },
        url: next.to_string(),
        headers: request.headers.clone(),
        body: if keep_method {
            request.body.clone()
        } else {
            None
        },
    }))
}
