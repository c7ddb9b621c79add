//! Account linking by verified email, then by subject.

use super::*;

fn identity(subject: &str, email: &str, verified: bool) -> Identity {
    Identity {
        issuer: "https://idp.example".into(),
        subject: subject.into(),
        email: Some(email.into()),
        email_verified: verified,
    }
}

#[test]
fn accounts_are_linked_by_email_once_then_found_by_subject() {
    // (Also: look-alike Unicode emails are refused below.)
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), None).unwrap();
    let alice = store.create_user("alice@acme.test").unwrap();
    let any = &[] as &[String];

    let first = account_for(&store, &identity("s1", "alice@acme.test", true), any);
    assert_eq!(first, Linked::Account(alice.id.clone()));
    // A new email at the provider: the subject's link holds.
    let renamed = account_for(&store, &identity("s1", "a.ng@acme.test", false), any);
    assert_eq!(renamed, Linked::Account(alice.id.clone()));
    // Her email given to another subject: refused.
    let other = account_for(&store, &identity("s2", "alice@acme.test", true), any);
    assert!(
        matches!(&other, Linked::Refused(why) if why.contains("linked to another identity")),
        "{other:?}"
    );
    // Unverified emails and other domains are refused before any link.
    let bob = store.create_user("bob@acme.test").unwrap();
    let unverified = account_for(&store, &identity("s3", "bob@acme.test", false), any);
    assert!(
        matches!(&unverified, Linked::Refused(why) if why.contains("has not verified")),
        "{unverified:?}"
    );
    let domains = ["example.com".to_string()];
    let elsewhere = account_for(&store, &identity("s3", "bob@acme.test", true), &domains);
    assert!(
        matches!(&elsewhere, Linked::Refused(why) if why.contains("cannot sign in here")),
        "{elsewhere:?}"
    );

    // The operator unlinks alice (quarry admin unlink-sso): her new
    // identity links by email.
    assert_eq!(unlink(&store, &alice.id).unwrap(), 1);
    let relinked = account_for(&store, &identity("s2", "alice@acme.test", true), any);
    assert_eq!(relinked, Linked::Account(alice.id.clone()));
    let old = account_for(&store, &identity("s1", "a.ng@acme.test", true), any);
    assert!(
        matches!(&old, Linked::Refused(why) if why.contains("no Quarry account")),
        "{old:?}"
    );
    assert_ne!(bob.id, alice.id);
    let kelvin = account_for(&store, &identity("s4", "\u{212A}@acme.test", true), any);
    assert!(
        matches!(&kelvin, Linked::Refused(why) if why.contains("cannot be matched")),
        "{kelvin:?}"
    );
}
