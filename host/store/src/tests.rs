//! The store's own records, through the real embedded backend.

use super::*;
use crate::secret::Secret;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), None).unwrap();
    (dir, store)
}

#[test]
fn tokens_are_stored_hashed_and_expire() {
    let (dir, store) = store();
    let user = store.create_user("Alice@Example.com").unwrap();
    assert_eq!(user.email, "alice@example.com");
    let (token, _) = store.issue_token(&user.id, 60, Audience::V1).unwrap();
    assert!(matches!(
        store.check_token(token.expose(), Audience::V1).unwrap(),
        TokenCheck::Valid { .. }
    ));
    assert_eq!(
        store.check_token("qt_nope", Audience::V1).unwrap(),
        TokenCheck::Unknown
    );
    let (mcp, _) = store.issue_token(&user.id, 60, Audience::Mcp).unwrap();
    assert_eq!(
        store.check_token(mcp.expose(), Audience::V1).unwrap(),
        TokenCheck::WrongAudience,
        "an MCP token is refused at /v1"
    );
    assert_eq!(
        store.check_token(token.expose(), Audience::Mcp).unwrap(),
        TokenCheck::WrongAudience,
        "a /v1 token is refused at /mcp"
    );
    assert!(matches!(
        store.check_token(mcp.expose(), Audience::Mcp).unwrap(),
        TokenCheck::Valid { .. }
    ));
    let (short, _) = store.issue_token(&user.id, 0, Audience::V1).unwrap();
    assert_eq!(
        store.check_token(short.expose(), Audience::V1).unwrap(),
        TokenCheck::Expired
    );
    drop(store);
    let file = std::fs::read(dir.path().join("quarry.redb")).unwrap();
    assert!(
        !contains(&file, token.expose().as_bytes()),
        "the token itself never reaches disk"
    );
}

#[test]
fn a_grant_carries_over_to_the_connectors_without_one() {
    let (_dir, store) = store();
    let alice = store.create_user("alice@b.c").unwrap();
    let bob = store.create_user("bob@b.c").unwrap();
    let grant = |token: &str| Grant {
        access_token: Secret::new(token),
        refresh_token: Some(Secret::new(format!("{token}-refresh"))),
        expires_at: Some(now() + 3600),
        settings: Vec::new(),
        status: GrantStatus::Connected,
        connected_at: now(),
    };
    store
        .put_grant(&alice.id, "old", &grant("alice-old"))
        .unwrap();
    store
        .put_grant(&alice.id, "mail", &grant("alice-mail"))
        .unwrap();
    store
        .put_grant(&bob.id, "files", &grant("bob-files"))
        .unwrap();
    assert_eq!(
        store.users_connected_to("old").unwrap(),
        vec![alice.id.clone()]
    );

    let given = store
        .carry_over_grant(&alice.id, "old", &["files", "mail"])
        .unwrap();
    assert_eq!(given, vec!["files".to_string()], "mail already had its own");
    let files = store.grant(&alice.id, "files").unwrap().unwrap();
    assert_eq!(files.access_token.expose(), "alice-old");
    assert_eq!(files.refresh_token.unwrap().expose(), "alice-old-refresh");
    let mail = store.grant(&alice.id, "mail").unwrap().unwrap();
    assert_eq!(mail.access_token.expose(), "alice-mail");
    assert!(store.grant(&alice.id, "old").unwrap().is_none());
    assert!(store.users_connected_to("old").unwrap().is_empty());
    // Again, and for someone with no grant: nothing to do.
    assert!(
        store
            .carry_over_grant(&alice.id, "old", &["files"])
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .carry_over_grant(&bob.id, "old", &["files"])
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .grant(&bob.id, "files")
            .unwrap()
            .unwrap()
            .access_token
            .expose(),
        "bob-files"
    );
}

#[test]
fn grants_are_encrypted_at_rest() {
    let (dir, store) = store();
    let user = store.create_user("a@b.c").unwrap();
    let grant = Grant {
        access_token: Secret::new("very-secret-token"),
        refresh_token: None,
        expires_at: None,
        settings: vec![("scope".into(), "repo:acme/shop".into())],
        status: GrantStatus::Connected,
        connected_at: now(),
    };
    store.put_grant(&user.id, "github", &grant).unwrap();
    let back = store.grant(&user.id, "github").unwrap().unwrap();
    assert_eq!(back.access_token.expose(), "very-secret-token");
    assert_eq!(store.grants(&user.id).unwrap().len(), 1);
    drop(store);
    let file = std::fs::read(dir.path().join("quarry.redb")).unwrap();
    assert!(!contains(&file, b"very-secret-token"));
}

#[test]
fn tokens_are_listed_by_user_and_revoked_by_id() {
    let (_dir, store) = store();
    let alice = store.create_user("alice@b.c").unwrap();
    let bob = store.create_user("bob@b.c").unwrap();
    let (token, _) = store.issue_token(&alice.id, 60, Audience::V1).unwrap();
    store.issue_token(&bob.id, 60, Audience::V1).unwrap();
    store.issue_token(&alice.id, 0, Audience::V1).unwrap();
    let listed = store.tokens_of(&alice.id).unwrap();
    assert_eq!(listed.len(), 1, "expired tokens are not listed");
    assert!(listed[0].id.starts_with("tok_"));
    assert!(!store.revoke_token(&bob.id, &listed[0].id).unwrap());
    assert!(store.revoke_token(&alice.id, &listed[0].id).unwrap());
    assert_eq!(
        store.check_token(token.expose(), Audience::V1).unwrap(),
        TokenCheck::Unknown
    );
    assert_eq!(store.tokens_of(&bob.id).unwrap().len(), 1);
    store.set_password_hash(&alice.id, "$argon2id$x").unwrap();
    assert!(store.password_hash(&alice.id).unwrap().is_some());
    let mut txn = store.write().unwrap();
    remove_user(SPACES, &mut txn, &alice.id).unwrap();
    txn.commit().unwrap();
    assert!(store.password_hash(&alice.id).unwrap().is_none());
    assert!(store.tokens_of(&alice.id).unwrap().is_empty());
}

#[test]
fn duplicate_emails_are_refused() {
    let (_dir, store) = store();
    store.create_user("a@b.c").unwrap();
    assert!(store.create_user("A@b.c").is_err());
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
