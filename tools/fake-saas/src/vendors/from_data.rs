//! The vendors played from data ([`crate::declared::PLAYED_FROM_DATA`]):
//! the token is checked as for every vendor, then the folder's routes
//! answer, each search by its declaration and records. What is the
//! vendor's own here is only its error shape, which
//! [`super::error_response`] already knows.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use axum::response::Response;

use super::{auth, error_response};
use crate::Shared;
use crate::declared::PLAYED_FROM_DATA;
use crate::fixtures::{self, FixtureRoute, Folder};
use crate::http::Req;
use crate::tokens::Vendor;

/// Each folder's routes, read once.
static ROUTES: LazyLock<BTreeMap<&'static str, Vec<FixtureRoute>>> = LazyLock::new(|| {
    PLAYED_FROM_DATA
        .iter()
        .map(|&(name, files)| {
            let routes = fixtures::load_folder(Folder::BuiltIn { name, files })
                .unwrap_or_else(|e| panic!("declared/{name}: {e:#}"));
            (name, routes)
        })
        .collect()
});

pub(crate) fn handle(shared: &Shared, vendor: Vendor, req: &Req) -> Response {
    if auth(shared, vendor, req).user().is_none() {
        return error_response(req, 401, None);
    }
    let routes = ROUTES.get(vendor.as_str()).map(Vec::as_slice);
    match routes.and_then(|routes| fixtures::answer_with(routes, req)) {
        Some(Ok(response)) => response,
        Some(Err(error)) => {
            tracing::error!(error = %format!("{error:#}"), "a declared vendor cannot answer");
            error_response(req, 500, None)
        }
        None => error_response(req, 404, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_folder_loads_and_names_a_vendor_with_a_declaration() {
        for (name, _) in PLAYED_FROM_DATA {
            assert!(!ROUTES[name].is_empty(), "{name}");
            assert!(Vendor::parse(name).is_some(), "{name} is no Vendor");
            assert!(crate::dataset::VENDORS.contains(name), "{name}");
            crate::search::declared(name);
        }
    }
}
