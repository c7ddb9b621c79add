//! A connector's one capability: a read-only HTTP fetch, which the host
//! provides. The sandbox hands each request the guest makes, with what the
//! call may still do ([`FetchBudget`]), to the host's [`Fetch`]; the host
//! admits it under the manifest's policy, adds the user's credential and
//! sends it (`quarry::connectors::upstream`). The sandbox itself has no
//! network.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use quarry_guard::manifest::{Manifest, SandboxLimits};
use quarry_guard::policy::{Denied, GuestRequest};
use quarry_store::secret::Secret;

/// A response returned to the guest.
#[derive(Debug, Clone)]
pub struct GuestResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
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

/// The host's side of the guest's `http` import.
pub trait Fetch: Send + Sync + 'static {
    /// Sends one guest request under the call's budget.
    fn fetch<'a>(
        &'a self,
        budget: &'a mut FetchBudget,
        request: GuestRequest,
    ) -> Fetching<'a, Result<GuestResponse, FetchError>>;

    /// Sends a batch of independent requests (contract 1.1's
    /// `http.fetch-many`); one result per request, in order.
    fn fetch_many<'a>(
        &'a self,
        budget: &'a mut FetchBudget,
        requests: Vec<GuestRequest>,
    ) -> Fetching<'a, Vec<Result<GuestResponse, FetchError>>>;
}

/// No network: every fetch is refused. The default, for a runtime that
/// only compiles and inspects components (`quarry connector check`).
pub struct NoNetwork;

const NO_NETWORK: &str = "this runtime has no network";

impl Fetch for NoNetwork {
    fn fetch<'a>(
        &'a self,
        _budget: &'a mut FetchBudget,
        _request: GuestRequest,
    ) -> Fetching<'a, Result<GuestResponse, FetchError>> {
        Box::pin(async { Err(FetchError::Denied(NO_NETWORK.into())) })
    }

    fn fetch_many<'a>(
        &'a self,
        _budget: &'a mut FetchBudget,
        requests: Vec<GuestRequest>,
    ) -> Fetching<'a, Vec<Result<GuestResponse, FetchError>>> {
        let refused = requests
            .iter()
            .map(|_| Err(FetchError::Denied(NO_NETWORK.into())))
            .collect();
        Box::pin(async move { refused })
    }
}
