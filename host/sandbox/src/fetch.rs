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
        // The host's fetch reads within the cap; a `Fetch` that does not is
        // refused here, so the guest never gets more.
        let cap = budget.limits.max_response_bytes;
        if response.body.len() as u64 > cap {
            return Err(FetchError::LimitExceeded(format!(
                "response is larger than {cap} bytes"
            )));
        }
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
        .url()
        .join(location)
        .map_err(|e| FetchError::Denied(format!("redirect Location does not parse: {e}")))?;
    // 307/308 repeat the request as it was; the others become a GET.
    let keep_method = matches!(response.status, 307 | 308);
    Ok(Some(GuestRequest {
        method: if keep_method {
            request.method()
        } else {
            Method::Get
        },
        url: next.to_string(),
        headers: request.headers().to_vec(),
        body: request.body().filter(|_| keep_method).map(<[u8]>::to_vec),
    }))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// What the network was sent: method, URL, body.
    type Sent = (Method, String, Option<Vec<u8>>);

    /// A network that answers each request with the next scripted
    /// response, and remembers what it was sent.
    struct Scripted {
        answers: Mutex<Vec<GuestResponse>>,
        sent: Mutex<Vec<Sent>>,
    }

    impl Scripted {
        fn new(answers: Vec<GuestResponse>) -> Scripted {
            Scripted {
                answers: Mutex::new(answers.into_iter().rev().collect()),
                sent: Mutex::new(Vec::new()),
            }
        }

        fn sent(&self) -> Vec<Sent> {
            self.sent.lock().unwrap().clone()
        }
    }

    impl Fetch for Scripted {
        fn send<'a>(
            &'a self,
            _budget: &'a FetchBudget,
            request: &'a Admitted,
        ) -> Fetching<'a, Result<GuestResponse, FetchError>> {
            let sent = (
                request.method(),
                request.url().to_string(),
                request.body().map(<[u8]>::to_vec),
            );
            self.sent.lock().unwrap().push(sent);
            let answer = self.answers.lock().unwrap().pop();
            Box::pin(async move { answer.ok_or(FetchError::Network("no answer left".into())) })
        }
    }

    fn budget(max_fetches: u32) -> FetchBudget {
        let manifest = Manifest::for_tests(
            r#"
            [[routes]]
            method = "GET"
            url = "https://api.example.com/{page}"
            [[routes]]
            method = "POST"
            url = "https://api.example.com/query"
            kind = "query"
            "#,
        );
        FetchBudget {
            manifest: Arc::new(manifest),
            limits: SandboxLimits {
                max_fetches,
                ..SandboxLimits::default()
            },
            credential: None,
            used: 0,
        }
    }

    fn ok() -> GuestResponse {
        GuestResponse {
            status: 200,
            headers: Vec::new(),
            body: b"{}".to_vec(),
        }
    }

    fn redirect(status: u16, to: &str) -> GuestResponse {
        GuestResponse {
            status,
            headers: vec![("Location".into(), to.into())],
            body: Vec::new(),
        }
    }

    fn get(url: &str) -> GuestRequest {
        GuestRequest {
            method: Method::Get,
            url: url.into(),
            headers: Vec::new(),
            body: None,
        }
    }

    fn post(url: &str) -> GuestRequest {
        GuestRequest {
            method: Method::Post,
            body: Some(br#"{"q":"x"}"#.to_vec()),
            ..get(url)
        }
    }

    #[tokio::test]
    async fn a_refused_request_never_reaches_the_network_and_costs_nothing() {
        let network = Scripted::new(vec![ok()]);
        let mut budget = budget(1);
        let refused = fetch(&network, &mut budget, get("https://evil.example/x")).await;
        assert!(matches!(refused, Err(FetchError::Denied(_))), "{refused:?}");
        assert!(network.sent().is_empty());
        assert_eq!(budget.used, 0);
        let answered = fetch(&network, &mut budget, get("https://api.example.com/a")).await;
        assert_eq!(answered.unwrap().status, 200);
        let over = fetch(&network, &mut budget, get("https://api.example.com/b")).await;
        assert!(
            matches!(over, Err(FetchError::LimitExceeded(_))),
            "{over:?}"
        );
        assert_eq!(network.sent().len(), 1);
    }

    #[tokio::test]
    async fn each_redirect_hop_is_admitted_and_a_303_becomes_a_get() {
        let network = Scripted::new(vec![redirect(303, "/next?page=2"), ok()]);
        let mut budget = budget(4);
        let answer = fetch(&network, &mut budget, post("https://api.example.com/query")).await;
        assert_eq!(answer.unwrap().status, 200);
        let sent = network.sent();
        assert_eq!(sent[1].0, Method::Get);
        assert_eq!(sent[1].1, "https://api.example.com/next?page=2");
        assert_eq!(sent[1].2, None, "a 303 drops the body");
        assert_eq!(budget.used, 1, "a redirect is part of its fetch");

        let network = Scripted::new(vec![redirect(307, "https://evil.example/steal"), ok()]);
        let refused = fetch(&network, &mut budget, get("https://api.example.com/a")).await;
        match refused {
            Err(FetchError::Denied(why)) => assert!(why.starts_with("redirect refused"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(network.sent().len(), 1, "the refused hop is not sent");
    }

    #[tokio::test]
    async fn redirects_stop_after_the_most_allowed() {
        let loops = (0..=MAX_REDIRECTS + 1)
            .map(|_| redirect(302, "https://api.example.com/again"))
            .collect();
        let network = Scripted::new(loops);
        let mut budget = budget(4);
        let answer = fetch(&network, &mut budget, get("https://api.example.com/a")).await;
        assert!(matches!(answer, Err(FetchError::Denied(_))), "{answer:?}");
        assert_eq!(network.sent().len(), MAX_REDIRECTS + 1);
    }

    #[tokio::test]
    async fn a_batch_that_does_not_fit_is_refused_whole() {
        let network = Scripted::new(vec![ok(), ok(), ok()]);
        let mut budget = budget(2);
        let batch = vec![
            get("https://api.example.com/1"),
            get("https://evil.example/2"),
            get("https://api.example.com/3"),
            get("https://api.example.com/4"),
        ];
        let answers = fetch_many(&network, &mut budget, batch).await;
        assert!(matches!(answers[1], Err(FetchError::Denied(_))));
        for i in [0, 2, 3] {
            assert!(
                matches!(answers[i], Err(FetchError::LimitExceeded(_))),
                "{i}"
            );
        }
        assert!(network.sent().is_empty());
        assert_eq!(budget.used, 0);
        let batch = vec![
            get("https://api.example.com/1"),
            get("https://evil.example/2"),
        ];
        let answers = fetch_many(&network, &mut budget, batch).await;
        assert_eq!(answers[0].as_ref().unwrap().status, 200);
        assert!(matches!(answers[1], Err(FetchError::Denied(_))));
        assert_eq!(budget.used, 1);
    }

    #[tokio::test]
    async fn an_answer_over_the_size_cap_does_not_reach_the_guest() {
        let big = GuestResponse {
            body: vec![b'x'; 2048],
            ..ok()
        };
        let network = Scripted::new(vec![big]);
        let mut budget = budget(4);
        budget.limits.max_response_bytes = 1024;
        let answer = fetch(&network, &mut budget, get("https://api.example.com/a")).await;
        assert!(
            matches!(answer, Err(FetchError::LimitExceeded(_))),
            "{answer:?}"
        );
    }
}
