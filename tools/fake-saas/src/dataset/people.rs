//! Acme's employees.

pub(crate) const PRIYA: usize = 0;
pub(crate) const DIEGO: usize = 1;
pub(crate) const MEI: usize = 2;
pub(crate) const TOMAS: usize = 3;
pub(crate) const AISHA: usize = 4;
pub(crate) const JONAS: usize = 5;
pub(crate) const SOFIA: usize = 6;
pub(crate) const KWAME: usize = 7;
pub(crate) const HANNAH: usize = 8;
pub(crate) const MARCUS: usize = 9;
pub(crate) const LENA: usize = 10;
pub(crate) const RAVI: usize = 11;
pub(crate) const EMMA: usize = 12;
pub(crate) const YUKI: usize = 13;

/// (name, GitHub login, GitHub id, Slack id, Slack username, title)
pub(crate) const PEOPLE: &[(&str, &str, u64, &str, &str, &str)] = &[
    (
        "Priya Raman",
        "praman",
        90187,
        "U061F7AUR",
        "priya",
        "Staff Engineer, Billing",
    ),
    (
        "Diego López",
        "dlopez",
        90211,
        "U04DL0P3Z2",
        "diego",
        "Senior Engineer, Checkout",
    ),
    (
        "Mei Chen",
        "meichen",
        71344,
        "U03MC8HEN1",
        "mei",
        "Search Engineer",
    ),
    (
        "Tomás Herrera",
        "therrera",
        66530,
        "U05TH3RR4A",
        "tomas",
        "Platform Engineer",
    ),
    (
        "Aisha Bello",
        "abello",
        58821,
        "U02AB7LL0P",
        "aisha",
        "SRE Lead",
    ),
    (
        "Jonas Weber",
        "jweber",
        80412,
        "U07JW3B3R5",
        "jonas",
        "Payments Engineer",
    ),
    (
        "Sofia Rossi",
        "srossi",
        93306,
        "U01SR0SS1V",
        "sofia",
        "Product Manager",
    ),
    (
        "Kwame Mensah",
        "kmensah",
        77215,
        "U06KM3NSAH",
        "kwame",
        "Mobile Engineer",
    ),
    (
        "Hannah Kim",
        "hannahkim",
        84490,
        "U08HK1M7Z1",
        "hannah",
        "Frontend Engineer, Growth",
    ),
    (
        "Marcus Olsen",
        "molsen",
        51007,
        "U01M4RCUS0",
        "marcus",
        "VP Engineering",
    ),
    (
        "Lena Novak",
        "lnovak",
        88120,
        "U04LN0VAK6",
        "lena",
        "Data Engineer",
    ),
    (
        "Ravi Patel",
        "rpatel",
        62958,
        "U03RV1PAT5",
        "ravi",
        "Security Engineer",
    ),
    (
        "Emma Dubois",
        "edubois",
        95533,
        "U05EMD8B0W",
        "emma",
        "Head of Customer Support",
    ),
    (
        "Yuki Tanaka",
        "ytanaka",
        97012,
        "U09YT4NAK4",
        "yuki",
        "Engineer, Checkout",
    ),
];

/// Slack channels: (id, name, is_private).
pub(crate) const CHANNELS: &[(&str, &str, bool)] = &[
    ("C024BE91L", "billing-eng", false),
    ("C03CHK7Q2A", "eng-checkout", false),
    ("C01INC5T9Z", "incidents", false),
    ("C04SRCH2B8", "search-eng", false),
    ("C02PLAT6K4", "platform", false),
    ("C05MOB3L7N", "mobile", false),
    ("C01PRD8D3H", "product", false),
    ("C06SEC4R1J", "security", true),
    ("C03SUP9E5F", "support-escalations", false),
    ("C01GEN0A1A", "general", false),
    ("C07GRW2T6U", "growth", false),
    ("C04DAT5X2P", "data-eng", false),
    ("C05PAY8M3Q", "payments", false),
];
