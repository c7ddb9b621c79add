//! Units of time ("hours", "2w", "a year"): counted back from an instant,
//! and the calendar unit that contains one.

use super::Span;
use super::vocabulary::parse_count_digits;
use crate::calendar::{Date, SECONDS_PER_DAY, SECONDS_PER_HOUR};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unit {
    Hour,
    Day,
    Week,
    Month,
    Year,
}

impl Unit {
    pub(super) fn parse(word: &str) -> Option<Unit> {
        Some(match word {
            "hour" | "hours" | "hr" | "hrs" => Unit::Hour,
            "day" | "days" => Unit::Day,
            "week" | "weeks" | "wk" | "wks" => Unit::Week,
            "month" | "months" => Unit::Month,
            "year" | "years" | "yr" | "yrs" => Unit::Year,
            _ => return None,
        })
    }

    /// The compact forms people type in chat: "24h", "7d", "2w", "1y".
    pub(super) fn parse_compact(word: &str) -> Option<(i64, Unit)> {
        let split = word.len().checked_sub(1)?;
        let (digits, suffix) = word.split_at_checked(split)?;
        let unit = match suffix {
            "h" => Unit::Hour,
            "d" => Unit::Day,
            "w" => Unit::Week,
            "y" => Unit::Year,
            _ => return None,
        };
        Some((parse_count_digits(digits)?, unit))
    }

    /// `count` units before `instant`; months and years count calendar
    /// months (clamped to shorter months), the others fixed seconds. Never
    /// before 1970: no business tool holds older records, and a year below
    /// 0000 has no RFC 3339 form.
    pub(super) fn before(self, instant: i64, count: i64) -> i64 {
        let months = match self {
            Unit::Hour => return (instant - count * SECONDS_PER_HOUR).max(0),
            Unit::Day => return (instant - count * SECONDS_PER_DAY).max(0),
            Unit::Week => return (instant - count * 7 * SECONDS_PER_DAY).max(0),
            Unit::Month => count,
            Unit::Year => count * 12,
        };
        let date = Date::of_instant(instant);
        let time_of_day = instant - date.start();
        (date.add_months(-months).start() + time_of_day).max(0)
    }

    /// The calendar hour, day, week (Monday to Sunday), month or year that
    /// contains `instant`.
    pub(super) fn containing(self, instant: i64) -> Span {
        let date = Date::of_instant(instant);
        match self {
            Unit::Hour => {
                let start = instant - instant.rem_euclid(SECONDS_PER_HOUR);
                Span::closed(start, start + SECONDS_PER_HOUR)
            }
            Unit::Day => Span::day(date),
            Unit::Week => {
                let monday = date.start() - i64::from(date.weekday()) * SECONDS_PER_DAY;
                Span::closed(monday, monday + 7 * SECONDS_PER_DAY)
            }
            Unit::Month => Span::month(date.year, date.month),
            Unit::Year => Span::year(date.year),
        }
    }
}
