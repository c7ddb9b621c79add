//! Where the user's credential goes: added by `upstream.rs` to a request
//! `quarry_guard::policy::admit` let through, only for the hosts the
//! manifest names. It stays in the host (the admission rules are in
//! `quarry-guard`, which never holds a credential) so that no [`Secret`]
//! crosses into the fuzzed, I/O-free crate.

use url::Url;

use super::manifest::{AuthScheme, Manifest};
use quarry_store::secret::Secret;

/// The credential header for `url`, if the manifest sends the user's token
/// to that host. The token never goes to any other host, including hosts a
/// redirect leads to that the manifest lists only as routes of another kind.
pub fn credential_header(
    manifest: &Manifest,
    url: &Url,
    credential: Option<&Secret>,
) -> Option<(String, String)> {
    let credential = credential?;
    if !manifest.auth.hosts.iter().any(|h| h.matches(url)) {
        return None;
    }
    match &manifest.auth.scheme {
        AuthScheme::Bearer => Some((
            "authorization".into(),
            format!("Bearer {}", credential.expose()),
        )),
        AuthScheme::Header(name) => Some((name.clone(), credential.expose().to_string())),
        AuthScheme::None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_goes_only_to_manifest_hosts() {
        let m = Manifest::for_tests(
            r#"
            # The defaults, spelled out: they are what the test checks.
            [auth]
            scheme = "bearer"
            hosts = ["api.example.com"]
            [[routes]]
            method = "GET"
            url = "https://api.example.com/search"
            "#,
        );
        let token = Secret::new("tok");
        let own = Url::parse("https://api.example.com/search").unwrap();
        let other = Url::parse("https://other.example.org/").unwrap();
        assert_eq!(
            credential_header(&m, &own, Some(&token)).unwrap().1,
            "Bearer tok"
        );
        assert!(credential_header(&m, &other, Some(&token)).is_none());
    }
}
