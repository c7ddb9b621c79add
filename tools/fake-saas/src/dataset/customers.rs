//! Acme's customers, and what they said about the stories that reached them.
//!
//! Business customers (cafés, offices, marketplace sellers) are HubSpot
//! companies with contacts; everyone writes to support (Zendesk tickets,
//! e-mails in Gmail). [`VOICES`] is the customers' side of the bugs and
//! incidents: the same stories as the engineering records, in customers'
//! words.

use std::sync::LazyLock;

/// A business customer: (company, domain, HubSpot industry, city, country,
/// contact first name, last name, job title, what they buy).
pub(crate) type Customer = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

pub(crate) const BLUEBIRD: usize = 0;
pub(crate) const NORTHWIND: usize = 1;
pub(crate) const MUELLER: usize = 2;
pub(crate) const MAPLE_LEAF: usize = 3;
pub(crate) const HARBOUR: usize = 4;
pub(crate) const LUMIERE: usize = 5;
pub(crate) const SUNRISE: usize = 6;
pub(crate) const NORDIC: usize = 7;
pub(crate) const CASA_VERDE: usize = 8;
pub(crate) const GREENLEAF: usize = 9;

pub(crate) const CUSTOMERS: &[Customer] = &[
    (
        "Bluebird Café Group",
        "bluebird-cafe.example",
        "FOOD_BEVERAGES",
        "Portland",
        "United States",
        "Dana",
        "Whitfield",
        "Owner",
        "Six cafés; a weekly wholesale subscription of beans and filters.",
    ),
    (
        "Northwind Roasters",
        "northwind-roasters.example",
        "FOOD_PRODUCTION",
        "Leeds",
        "United Kingdom",
        "Oliver",
        "Grant",
        "Head of Purchasing",
        "Buys grinders and brewing gear for its shops, pays in GBP.",
    ),
    (
        "Kaffeehaus Müller",
        "kaffeehaus-mueller.example",
        "RESTAURANTS",
        "Munich",
        "Germany",
        "Katrin",
        "Müller",
        "Managing Director",
        "Three coffee houses on a monthly subscription invoice, pays by card.",
    ),
    (
        "Maple Leaf Espresso Bar",
        "mapleleaf-espresso.example",
        "RESTAURANTS",
        "Montréal",
        "Canada",
        "Jean-Luc",
        "Tremblay",
        "Operations Manager",
        "Espresso bars in Montréal and Toronto; orders ship to Quebec and Ontario.",
    ),
    (
        "Harbour Street Deli",
        "harbourstreet-deli.example",
        "RETAIL",
        "Bristol",
        "United Kingdom",
        "Fiona",
        "Walsh",
        "Store Manager",
        "Resells Acme beans in its deli; orders weekly from stock.",
    ),
    (
        "Café Lumière",
        "cafe-lumiere.example",
        "RESTAURANTS",
        "Lyon",
        "France",
        "Camille",
        "Laurent",
        "Owner",
        "A café with a roastery corner; long French delivery addresses.",
    ),
    (
        "Sunrise Co-working Spaces and Community Kitchens of Greater Austin LLC",
        "sunrise-cowork.example",
        "REAL_ESTATE",
        "Austin",
        "United States",
        "Greg",
        "Alvarez",
        "Office Manager",
        "Coffee for five co-working spaces, invoiced yearly.",
    ),
    (
        "Nordic Brew Supply",
        "nordicbrew.example",
        "WHOLESALE",
        "Oslo",
        "Norway",
        "Ingrid",
        "Solberg",
        "Founder",
        "Marketplace seller of brewing equipment.",
    ),
    (
        "Casa Verde Tostadores",
        "casaverde.example",
        "FOOD_PRODUCTION",
        "Valencia",
        "Spain",
        "Pablo",
        "Ortega",
        "Sales Lead",
        "Marketplace seller of specialty beans from Spanish roasters.",
    ),
    (
        "Greenleaf Offices",
        "greenleaf-offices.example",
        "COMMERCIAL_REAL_ESTATE",
        "Dublin",
        "Ireland",
        "Siobhan",
        "Kelly",
        "Facilities Lead",
        "Office coffee for 1,200 employees, ordered in bulk.",
    ),
];

/// More people at customers: (customer, first name, last name, job title).
pub(crate) const MORE_CONTACTS: &[(usize, &str, &str, &str)] = &[
    (BLUEBIRD, "Ramon", "Ellis", "Head Barista"),
    (NORTHWIND, "Abigail", "Shaw", "Finance Manager"),
    (GREENLEAF, "Conor", "Byrne", "Procurement Officer"),
];

/// Who wrote: a business customer's main contact, or a shopper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Who {
    Business(usize),
    Shopper,
}

/// The customers' side of a story: what a customer wrote about it.
#[derive(Debug)]
pub(crate) struct Voice {
    /// The story's slug.
    pub story: String,
    pub who: Who,
    pub subject: String,
    pub message: String,
}

/// The customers' side of the stories, from `voices.toml`.
pub(crate) static VOICES: LazyLock<Vec<Voice>> = LazyLock::new(|| {
    #[derive(serde::Deserialize)]
    struct File {
        voice: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        story: String,
        from: String,
        subject: String,
        message: String,
    }
    let file: File = toml::from_str(include_str!("voices.toml")).expect("voices.toml");
    file.voice
        .into_iter()
        .map(|entry| Voice {
            who: writer(&entry.from),
            story: entry.story,
            subject: entry.subject,
            message: entry.message,
        })
        .collect()
});

/// Who wrote: "shopper", or a business customer's company.
fn writer(from: &str) -> Who {
    if from == "shopper" {
        return Who::Shopper;
    }
    let customer = CUSTOMERS.iter().position(|c| c.0 == from);
    Who::Business(customer.unwrap_or_else(|| panic!("voices.toml: no customer {from:?}")))
}

const FIRST: &[&str] = &[
    "Alex", "Jamie", "Morgan", "Sam", "Charlie", "Robin", "Noor", "Mateo", "Chloé", "Lars", "Aiko",
    "Tobias", "Zara", "Femi", "Ines", "Owen",
];
const LAST: &[&str] = &[
    "Fischer",
    "Brennan",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Costa",
    "Hughes",
    "Novotny",
    "Sato",
    "Baker",
    "Rahman",
    "Keller",
    "Duarte",
    "Price",
    "Mahler",
    "Quinn",
];

/// A shopper's name and e-mail address, chosen by `seed`.
pub(crate) fn shopper(seed: &str) -> (String, String) {
    let h = super::fnv(&format!("shopper:{seed}"));
    let first = FIRST[(h % FIRST.len() as u64) as usize];
    let last = LAST[((h >> 16) % LAST.len() as u64) as usize];
    let local: String = format!("{first}.{last}")
        .to_lowercase()
        .chars()
        .map(|c| match c {
            'é' => 'e',
            c => c,
        })
        .collect();
    (format!("{first} {last}"), format!("{local}@mail.example"))
}

/// A business customer's main contact: (name, e-mail address).
pub(crate) fn contact(customer: usize) -> (String, String) {
    let c = CUSTOMERS[customer];
    let local = ascii(&c.5.to_lowercase());
    (format!("{} {}", c.5, c.6), format!("{local}@{}", c.1))
}

/// Lower-case ASCII for addresses (`Müller` → `muller`, `Jean-Luc` kept).
pub(crate) fn ascii(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            'ä' | 'á' | 'à' | 'â' => Some('a'),
            'é' | 'è' | 'ê' => Some('e'),
            'í' | 'î' => Some('i'),
            'ó' | 'ö' | 'ô' => Some('o'),
            'ü' | 'ú' => Some('u'),
            'ç' => Some('c'),
            c if c.is_ascii_alphanumeric() || c == '-' || c == '.' => Some(c),
            _ => None,
        })
        .collect()
}

/// The voice of a story, if customers wrote about it.
pub(crate) fn voice(slug: &str) -> Option<(Who, &'static str, &'static str)> {
    VOICES
        .iter()
        .find(|v| v.story == slug)
        .map(|v| (v.who, v.subject.as_str(), v.message.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voices_name_real_stories() {
        for voice in VOICES.iter() {
            assert!(
                super::super::stories::STORIES
                    .iter()
                    .any(|s| s.slug == voice.story),
                "{}",
                voice.story
            );
        }
        assert!(
            CUSTOMERS[SUNRISE].0.len() > 60,
            "a name that breaks invoice PDFs"
        );
        assert_eq!(contact(MUELLER).1, "katrin@kaffeehaus-mueller.example");
    }
}
