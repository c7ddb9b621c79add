//! Acme's customers, and what they said about the stories that reached them.
//!
//! Business customers (cafés, offices, marketplace sellers) are HubSpot
//! companies with contacts; everyone writes to support (Zendesk tickets,
//! e-mails in Gmail). [`VOICES`] is the customers' side of the bugs and
//! incidents: the same stories as the engineering records, in customers'
//! words.

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

/// The customers' side of a story: (story slug, who, subject, what they wrote).
pub(crate) const VOICES: &[(&str, Who, &str, &str)] = &[
    (
        "password-reset-spam",
        Who::Shopper,
        "Password reset email never arrives",
        "I requested a password reset three times and got nothing. I use an Outlook address. I finally found the emails in my junk folder. Can you make sure they land in the inbox?",
    ),
    (
        "incident-lb-cert",
        Who::Business(BLUEBIRD),
        "Checkout shows 502 Bad Gateway, we cannot pay",
        "Our team tried to place our weekly order just after 14:00 UTC and the checkout kept showing a 502 Bad Gateway page. We retried four times. Is the shop down?",
    ),
    (
        "cart-badge-stale",
        Who::Shopper,
        "Items disappeared from my cart after logging in",
        "I added two bags of beans as a guest, logged in, and the cart badge still said 2 but then my cart looked wrong. I added them again and now I am not sure what I will be charged for.",
    ),
    (
        "invoice-retry-double-charge",
        Who::Business(MUELLER),
        "Charged twice for the same subscription invoice",
        "Our card was charged twice for the March subscription invoice. The first payment needed 3-D Secure which I confirmed in the evening, and the next morning there was a second charge. Please refund the duplicate charge.",
    ),
    (
        "search-accents",
        Who::Shopper,
        "Search cannot find the creme brulee torch",
        "When I search for creme brulee torch I get no results, but I know you sell one. Typing the accents finds it. Most people will not type accents.",
    ),
    (
        "android15-crash",
        Who::Shopper,
        "App crashes when I open my orders (Android 15)",
        "Since my Pixel updated to Android 15 the app closes every time I tap Orders. I cannot see my order history at all.",
    ),
    (
        "checkout-timeout-50",
        Who::Business(GREENLEAF),
        "Bulk order times out at payment",
        "We order office coffee supplies in bulk, about 60 items at a time. The Pay button spins and then we get a timeout error. Smaller orders go through. We need the bulk order to work for our monthly restock.",
    ),
    (
        "incident-orders-index",
        Who::Shopper,
        "Order history takes forever to load",
        "The order history page has been loading for a minute and then shows an error. I need an invoice from an old order.",
    ),
    (
        "canada-tax",
        Who::Business(MAPLE_LEAF),
        "Wrong sales tax on our Quebec order",
        "Our order shipped to Montréal was charged 5% GST only, without QST, and our Toronto order was charged GST plus PST instead of HST. Our accountant needs corrected invoices.",
    ),
    (
        "abandoned-cart-twice",
        Who::Shopper,
        "Getting every cart reminder email twice",
        "Every time I leave something in my cart I get the reminder email twice, a minute apart. Please stop the duplicates.",
    ),
    (
        "incident-webhook-backlog",
        Who::Shopper,
        "Paid twice and the order is still pending payment",
        "My order says pending payment, so I paid again. Now my bank shows two payments and I never got a confirmation email.",
    ),
    (
        "refund-currency",
        Who::Business(NORTHWIND),
        "Refund email shows euros, we paid in pounds",
        "The refund confirmation for our grinder order shows the amount with a euro sign. We paid in GBP. Is the refund amount right?",
    ),
    (
        "warehouse-sync-emoji",
        Who::Shopper,
        "My order never shipped",
        "My order from two weeks ago still says processing. The only unusual thing is that my building name has a coffee cup emoji in it. Could that be the reason?",
    ),
    (
        "autocomplete-slow",
        Who::Shopper,
        "Search suggestions are very slow on my phone",
        "On mobile data the search suggestions take forever to appear and the page stutters while I type.",
    ),
    (
        "incident-cached-account-pages",
        Who::Shopper,
        "I saw someone else's order confirmation",
        "When I opened my order confirmation I saw another customer's name, shipping address and the last four digits of their card. This is a serious privacy problem.",
    ),
    (
        "inventory-drift",
        Who::Business(HARBOUR),
        "Order cancelled: out of stock although the shop said in stock",
        "Our weekly order was cancelled again because two items were out of stock, although the shop showed them in stock when we ordered. This is the third time this month.",
    ),
    (
        "incident-bf-queue",
        Who::Shopper,
        "No confirmation email for my Black Friday order",
        "I ordered this morning during the Black Friday sale. The payment went through but I have no confirmation email and the order is not in my account yet.",
    ),
    (
        "uk-postcode",
        Who::Business(NORTHWIND),
        "Parcel returned: wrong postcode on the label",
        "Our parcel came back to you as undeliverable. The label has a different postcode from the one we picked in the address suggestions.",
    ),
    (
        "gdpr-export-notes",
        Who::Shopper,
        "My data export does not include my gift messages",
        "I requested my personal data export under GDPR. It does not include the order notes and gift messages I wrote. Please send a complete export.",
    ),
    (
        "incident-status-cert",
        Who::Business(SUNRISE),
        "Your status page shows a security warning",
        "We wanted to check your status page and the browser shows a certificate warning. Is the page safe?",
    ),
    (
        "ios-push",
        Who::Shopper,
        "No shipping notifications on my iPhone",
        "Since updating to iOS 19 I no longer get shipping notifications from the app, although notifications are allowed.",
    ),
    (
        "invoice-pdf-blank",
        Who::Business(SUNRISE),
        "Our invoice PDF is blank",
        "The invoice PDFs we download are completely blank. Our finance team cannot book them.",
    ),
    (
        "incident-redis-logout",
        Who::Shopper,
        "Logged out and my cart is empty",
        "I was logged out in the middle of shopping and my cart is now empty. I had twelve items in it.",
    ),
    (
        "search-out-of-stock",
        Who::Shopper,
        "Search shows only sold-out products",
        "When I search for grinders the first results are all sold out. I have to scroll a long way to find something I can buy.",
    ),
    (
        "long-address-checkout",
        Who::Business(LUMIERE),
        "Something went wrong when placing our order",
        "Every time we place an order the checkout says Something went wrong. Our delivery address is long (Résidence, bâtiment, escalier, cour intérieure), could that be it?",
    ),
    (
        "invoice-retry-dst",
        Who::Business(MUELLER),
        "October invoice still unpaid although our card is valid",
        "Our October subscription invoice shows as unpaid and we got a warning, but our card is valid and nothing was attempted. Please retry the payment.",
    ),
    (
        "checkout-bundles-timeout",
        Who::Shopper,
        "Espresso starter kit order times out",
        "I tried to buy the espresso starter kit three times and the payment step times out each time. Other items work.",
    ),
    (
        "incident-search-disk",
        Who::Business(NORDIC),
        "Our new products do not appear in search",
        "We listed six new products this morning and none of them appear in the shop search. Price changes are not showing either.",
    ),
    (
        "giftcard-discount",
        Who::Business(GREENLEAF),
        "Cannot use a gift card together with a discount code",
        "Our employees received gift cards and a 10% discount code, but the checkout only accepts one of them.",
    ),
    (
        "support-delayed-shipments",
        Who::Shopper,
        "Where is my order? It is late",
        "My order was supposed to arrive three days ago and the tracking has not changed. Can you tell me where it is?",
    ),
];

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
    VOICES.iter().find(|v| v.0 == slug).map(|v| (v.1, v.2, v.3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voices_name_real_stories() {
        for (slug, ..) in VOICES {
            assert!(
                super::super::stories::STORIES
                    .iter()
                    .any(|s| s.slug == *slug),
                "{slug}"
            );
        }
        assert!(
            CUSTOMERS[SUNRISE].0.len() > 60,
            "a name that breaks invoice PDFs"
        );
        assert_eq!(contact(MUELLER).1, "katrin@kaffeehaus-mueller.example");
    }
}
