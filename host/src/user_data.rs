//! The registry of spaces: every owner's list of its spaces (each space
//! declares whose records it holds where it is made: `Space::keyed_by_user`,
//! `Space::user_owned` or `Space::shared` with the reason), gathered here.
//! A user's spaces come in the order the deletion removes them; `server.rs`
//! hands [`user_data`] to `deletion` (which so depends on no owner).
//!
//! Two tests hold it: [`tests`] below finds every space the sources make
//! and requires it here exactly once; the lifecycle test
//! (`after_a_deletion_no_space_holds_a_record_that_names_the_user` in
//! `tests/dashboard.rs`) fails on a space that holds a user's record after
//! their deletion.

use quarry_store::{Declared, UserData};

/// Every owner's spaces. The store's own come first: its email index reads
/// the profile before the profile goes.
pub const SPACES: &[&[Declared]] = &[
    quarry_store::SPACES,
    crate::archive::SPACES,
    crate::webhooks::SPACES,
    crate::issuer::SPACES,
    crate::dashboard::SPACES,
    &[crate::deletion::DELETIONS.declared()],
    &[crate::oauth::revoke::REVOCATIONS.declared()],
];

/// Every space, declared.
pub fn spaces() -> impl Iterator<Item = &'static Declared> {
    SPACES.iter().copied().flatten()
}

/// Every space holding records bound to a user, in deletion order.
pub fn user_data() -> impl Iterator<Item = UserData> {
    spaces().filter_map(Declared::user_data)
}

/// Whether a space is declared.
pub fn is_declared(space: &str) -> bool {
    spaces().any(|declared| declared.space == space)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use quarry_store::Owner;

    /// The name of every space the sources make (the host's and the
    /// store's), with the file that makes it: the text after each `Space::keyed_by_user(`, `Space::user_owned(`
    /// or `Space::shared(` (also through the dashboard's `pending::Table`).
    fn spaces_made_in_the_sources() -> BTreeMap<String, Vec<String>> {
        let host = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut made: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let roots = [host.join("src"), host.join("store/src")];
        let sources = roots.iter().flat_map(|root| {
            let paths = crate::invariants::sources(root);
            paths.into_iter().map(move |path| (root, path))
        });
        for (root, path) in sources {
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            if relative.starts_with("records/")
                || relative.starts_with("invariants/")
                || relative == "user_data.rs"
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for constructor in ["::keyed_by_user(", "::user_owned(", "::shared("] {
                for (at, _) in text.match_indices(constructor) {
                    let before = &text[..at];
                    if !(before.ends_with("Space") || before.ends_with("Table")) {
                        continue;
                    }
                    let after = text[at + constructor.len()..].trim_start();
                    let name: String = after
                        .strip_prefix('"')
                        .map(|rest| rest.chars().take_while(|c| *c != '"').collect())
                        .unwrap_or_default();
                    made.entry(name).or_default().push(relative.clone());
                }
            }
        }
        made
    }

    #[test]
    fn every_space_the_sources_make_is_declared_here_once() {
        let made = spaces_made_in_the_sources();
        assert!(made.len() >= 30, "spaces found: {made:?}");
        let mut declared: BTreeMap<&str, usize> = BTreeMap::new();
        for space in spaces() {
            *declared.entry(space.space).or_default() += 1;
        }
        for (name, files) in &made {
            assert_eq!(files.len(), 1, "{name:?} is made twice: {files:?}");
            assert_eq!(
                declared.get(name.as_str()),
                Some(&1),
                "{name:?} (made in {files:?}) is not in user_data::SPACES exactly once"
            );
        }
        for name in declared.keys() {
            assert!(
                made.contains_key(*name),
                "{name:?} is declared but made nowhere"
            );
        }
    }

    #[test]
    fn every_shared_space_says_why() {
        for space in spaces() {
            if let Owner::Shared(why) = space.owner {
                assert!(why.len() > 20, "{}: {why:?}", space.space);
            }
        }
    }
}
