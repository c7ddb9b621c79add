//! A tool's logo: manifests carry no icon, so each tool gets a badge made
//! here, its label's initials on a colour picked from its id. Inline SVG
//! coloured by the stylesheet: nothing to fetch, no external image, and
//! the CSP stays strict. The label always stands next to it, so the badge
//! is hidden from screen readers.

use maud::{Markup, html};

/// The badge colours in the stylesheet (`.logo-0` …): each dark enough
/// for white initials.
pub const COLOURS: usize = 8;

/// The badge of the tool `id` labelled `label`.
pub fn badge(id: &str, label: &str) -> Markup {
    html! {
        svg class={ "logo logo-" (colour_of(id)) } viewBox="0 0 24 24" width="24" height="24"
            aria-hidden="true" focusable="false" {
            rect width="24" height="24" rx="5" {}
            text x="12" y="16" text-anchor="middle" { (initials(label)) }
        }
    }
}

/// Up to two initials: the first letters of the label's first two words
/// ("Google Drive" is "GD", "Microsoft 365" "M3"), else its first letter.
pub fn initials(label: &str) -> String {
    let initials: String = label
        .split(|c: char| !c.is_alphanumeric())
        .filter_map(|word| word.chars().next())
        .take(2)
        .flat_map(char::to_uppercase)
        .collect();
    match initials.is_empty() {
        true => "?".to_string(),
        false => initials,
    }
}

/// A colour that stays the tool's own from page to page (FNV-1a of its id).
fn colour_of(id: &str) -> usize {
    let hash = id.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    hash as usize % COLOURS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initials_come_from_the_label() {
        assert_eq!(initials("GitHub"), "G");
        assert_eq!(initials("Google Drive"), "GD");
        assert_eq!(initials("Microsoft 365"), "M3");
        assert_eq!(initials("  élan vital & co"), "ÉV");
        assert_eq!(initials("—"), "?");
    }

    #[test]
    fn a_badge_shows_letters_only_and_keeps_its_colour() {
        let badge = badge("evil", "<b> & x").into_string();
        assert!(badge.contains(">BX</text>"), "{badge}");
        assert_eq!(colour_of("github"), colour_of("github"));
        assert!((0..COLOURS).contains(&colour_of("github")));
        assert!(badge.contains(r#"aria-hidden="true""#));
    }
}
