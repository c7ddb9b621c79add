//! The words of time expressions, one at a time: month and weekday names,
//! counts, days of the month, years and ISO dates.

use super::Span;
use crate::calendar::Date;

pub(super) fn parse_month(word: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    if word == "sept" {
        return Some(9);
    }
    MONTHS
        .iter()
        .position(|name| word == *name || (word.len() == 3 && name.starts_with(word)))
        .map(|index| index as u32 + 1)
}

/// 0 for Monday through 6 for Sunday.
pub(super) fn parse_weekday(word: &str) -> Option<u32> {
    const WEEKDAYS: [&str; 7] = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    let abbreviation = match word {
        "tues" => Some(1),
        "weds" => Some(2),
        "thur" | "thurs" => Some(3),
        _ => None,
    };
    abbreviation.or_else(|| {
        WEEKDAYS
            .iter()
            .position(|name| word == *name || (word.len() == 3 && name.starts_with(word)))
            .map(|index| index as u32)
    })
}

/// A count in digits, bounded so that arithmetic on it cannot overflow.
pub(super) fn parse_count_digits(word: &str) -> Option<i64> {
    if word.is_empty() || word.len() > 5 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse().ok().filter(|count| *count > 0)
}

pub(super) fn parse_count(word: &str) -> Option<i64> {
    const NUMBERS: [&str; 12] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    match word {
        "a" | "an" => Some(1),
        _ => NUMBERS
            .iter()
            .position(|name| word == *name)
            .map(|index| index as i64 + 1)
            .or_else(|| parse_count_digits(word)),
    }
}

/// A day of the month: "4", "04", "4th", "1st", "22nd", "3rd".
pub(super) fn parse_day(word: &str) -> Option<u32> {
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|suffix| word.strip_suffix(suffix))
        .unwrap_or(word);
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|day| (1..=31).contains(day))
}

/// A year plausible in a business tool's records.
pub(super) fn parse_year(word: &str) -> Option<i64> {
    if word.len() != 4 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse()
        .ok()
        .filter(|year| (1970..=2100).contains(year))
}

/// `2025-03-04`, `2025/03/04` (a day) or `2025-03` (a month).
pub(super) fn parse_iso(word: &str) -> Option<Span> {
    let parts: Vec<&str> = word.split(['-', '/']).collect();
    let number = |text: &str, width: usize| -> Option<u32> {
        (text.len() == width && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse().ok())
            .flatten()
    };
    let year = i64::from(number(parts.first()?, 4)?);
    let month = number(parts.get(1)?, 2)?;
    match parts.get(2) {
        None => Date::new(year, month, 1).map(|_| Span::month(year, month)),
        Some(day) if parts.len() == 3 => Date::new(year, month, number(day, 2)?).map(Span::day),
        Some(_) => None,
    }
}
