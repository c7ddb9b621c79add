//! Calendar arithmetic on Unix seconds, in UTC.
//!
//! Time expressions need only a handful of operations (start of a day, a
//! week, a month; a month earlier; the weekday) and must be exact around
//! month ends, year ends and leap days. The calendar itself is jiff's
//! (`jiff::civil`); this module keeps those few operations on Unix seconds
//! and on years of any size. Everything is UTC: the API carries no user
//! time zone.

use jiff::Span;
use jiff::civil;

pub const SECONDS_PER_HOUR: i64 = 3_600;
pub const SECONDS_PER_DAY: i64 = 86_400;

/// The Gregorian calendar repeats every 400 years, and 400 years are
/// 146 097 days, a whole number of weeks. jiff's dates span the years -9999
/// to 9999; any other year (a month counted back from "the last 99999
/// years") is computed in the cycle starting in 1970 that has the same
/// calendar, then moved back by whole cycles.
const CYCLE_YEARS: i64 = 400;
const CYCLE_DAYS: i64 = 146_097;

const EPOCH: civil::Date = civil::Date::constant(1970, 1, 1);

/// `year` as a year of the cycle 1970..=2369 with the same calendar, and
/// the number of cycles between them.
fn fold_year(year: i64) -> (i16, i64) {
    let cycles = (year - 1970).div_euclid(CYCLE_YEARS);
    let folded = year - cycles * CYCLE_YEARS;
    (i16::try_from(folded).expect("1970..=2369"), cycles)
}

/// A calendar date in the proleptic Gregorian calendar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: i64,
    pub month: u32,
    pub day: u32,
}

impl Date {
    /// The date, if `day` exists in that month (no 31 April, no 29 February
    /// 2025): a question naming an impossible date is not a time expression.
    pub fn new(year: i64, month: u32, day: u32) -> Option<Date> {
        let (month8, day8) = (i8::try_from(month).ok()?, i8::try_from(day).ok()?);
        civil::Date::new(fold_year(year).0, month8, day8).ok()?;
        Some(Date { year, month, day })
    }

    /// The date that contains the instant `unix` (seconds since 1970).
    pub fn of_instant(unix: i64) -> Date {
        Date::from_days(unix.div_euclid(SECONDS_PER_DAY))
    }

    /// The date `days` days after 1970-01-01.
    pub fn from_days(days: i64) -> Date {
        let in_cycle = EPOCH
            .checked_add(Span::new().days(days.rem_euclid(CYCLE_DAYS)))
            .expect("within 400 years of 1970");
        Date::from_civil(in_cycle, days.div_euclid(CYCLE_DAYS))
    }

    /// Days since 1970-01-01 (negative before).
    pub fn days(self) -> i64 {
        let (date, cycles) = self.civil();
        date.duration_since(EPOCH).as_secs() / SECONDS_PER_DAY + cycles * CYCLE_DAYS
    }

    /// The first second of this date.
    pub fn start(self) -> i64 {
        self.days() * SECONDS_PER_DAY
    }

    /// 0 for Monday through 6 for Sunday (ISO order: weeks start on Monday).
    pub fn weekday(self) -> u32 {
        self.civil().0.weekday().to_monday_zero_offset() as u32
    }

    /// The same day `delta` months away, clamped to the end of a shorter
    /// month (31 March minus one month is 28 or 29 February), the way people
    /// count "a month ago".
    pub fn add_months(self, delta: i64) -> Date {
        const CYCLE_MONTHS: i64 = CYCLE_YEARS * 12;
        let (date, cycles) = self.civil();
        let moved = date
            .checked_add(Span::new().months(delta.rem_euclid(CYCLE_MONTHS)))
            .expect("within 800 years of 1970");
        Date::from_civil(moved, cycles + delta.div_euclid(CYCLE_MONTHS))
    }

    /// This date in the cycle starting in 1970 (see [`fold_year`]), and the
    /// cycles between them. Every `Date` is a real date: [`Date::new`]
    /// checks, and the other constructors make only real ones.
    fn civil(self) -> (civil::Date, i64) {
        let (year, cycles) = fold_year(self.year);
        let date = civil::Date::new(year, self.month as i8, self.day as i8)
            .expect("a Date is a real date");
        (date, cycles)
    }

    /// `date`, `cycles` of 400 years later.
    fn from_civil(date: civil::Date, cycles: i64) -> Date {
        Date {
            year: i64::from(date.year()) + cycles * CYCLE_YEARS,
            month: date.month() as u32,
            day: date.day() as u32,
        }
    }
}

pub fn is_leap_year(year: i64) -> bool {
    civil::Date::constant(fold_year(year).0, 1, 1).in_leap_year()
}

/// The days of `month` (1 to 12) in `year`; 31 for any other month.
pub fn days_in_month(year: i64, month: u32) -> u32 {
    i8::try_from(month)
        .ok()
        .and_then(|month| civil::Date::new(fold_year(year).0, month, 1).ok())
        .map_or(31, |first| first.days_in_month() as u32)
}

/// RFC 3339 in UTC with second precision (`2026-11-15T00:00:00Z`): the form
/// the connector contract gives `since` and `until`.
pub fn rfc3339(unix: i64) -> String {
    let date = Date::of_instant(unix);
    let seconds = unix.rem_euclid(SECONDS_PER_DAY);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        date.year,
        date.month,
        date.day,
        seconds / SECONDS_PER_HOUR,
        seconds % SECONDS_PER_HOUR / 60,
        seconds % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(year: i64, month: u32, day: u32) -> Date {
        Date::new(year, month, day).unwrap()
    }

    #[test]
    fn epoch_and_known_days() {
        assert_eq!(date(1970, 1, 1).days(), 0);
        assert_eq!(date(2000, 3, 1).days(), 11_017);
        assert_eq!(date(1969, 12, 31).days(), -1);
        assert_eq!(date(2026, 11, 15).start(), 1_794_700_800);
    }

    #[test]
    fn days_round_trip_across_centuries() {
        for days in (-800_000..800_000).step_by(7) {
            assert_eq!(Date::from_days(days).days(), days);
        }
    }

    #[test]
    fn years_beyond_jiffs_range_follow_the_400_year_cycle() {
        let ten_thousand_years = 25 * CYCLE_DAYS;
        assert_eq!(
            date(12_026, 11, 15).days(),
            date(2026, 11, 15).days() + ten_thousand_years
        );
        assert_eq!(date(12_026, 11, 15).weekday(), 6); // Sunday, as in 2026
        assert_eq!(
            Date::from_days(date(-98_030, 3, 1).days()),
            date(-98_030, 3, 1)
        );
        assert_eq!(
            date(2024, 2, 29).add_months(-99_999 * 12),
            date(-97_975, 2, 28)
        );
        assert!(is_leap_year(-97_976));
        assert_eq!(days_in_month(12_024, 2), 29);
    }

    #[test]
    fn consecutive_days_are_consecutive_dates() {
        let mut previous = Date::from_days(-1000);
        for days in -999..100_000 {
            let current = Date::from_days(days);
            let next_expected = if previous.day < days_in_month(previous.year, previous.month) {
                date(previous.year, previous.month, previous.day + 1)
            } else if previous.month < 12 {
                date(previous.year, previous.month + 1, 1)
            } else {
                date(previous.year + 1, 1, 1)
            };
            assert_eq!(current, next_expected);
            previous = current;
        }
    }

    #[test]
    fn leap_years() {
        assert!(is_leap_year(2024));
        assert!(is_leap_year(2000));
        assert!(!is_leap_year(1900));
        assert!(!is_leap_year(2100));
        assert!(!is_leap_year(2026));
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(2025, 2), 28);
        assert!(Date::new(2025, 2, 29).is_none());
        assert!(Date::new(2024, 2, 29).is_some());
        assert!(Date::new(2025, 4, 31).is_none());
        assert!(Date::new(2025, 13, 1).is_none());
        assert!(Date::new(2025, 1, 0).is_none());
    }

    #[test]
    fn weekdays() {
        assert_eq!(date(1970, 1, 1).weekday(), 3); // Thursday
        assert_eq!(date(2026, 11, 16).weekday(), 0); // Monday
        assert_eq!(date(2026, 11, 15).weekday(), 6); // Sunday
        assert_eq!(date(2024, 2, 29).weekday(), 3); // Thursday
        assert_eq!(date(1969, 12, 29).weekday(), 0); // Monday, before the epoch
    }

    #[test]
    fn adding_months_clamps_to_month_end() {
        assert_eq!(date(2025, 3, 31).add_months(-1), date(2025, 2, 28));
        assert_eq!(date(2024, 3, 31).add_months(-1), date(2024, 2, 29));
        assert_eq!(date(2024, 2, 29).add_months(-12), date(2023, 2, 28));
        assert_eq!(date(2026, 1, 15).add_months(-1), date(2025, 12, 15));
        assert_eq!(date(2026, 1, 15).add_months(-25), date(2023, 12, 15));
        assert_eq!(date(2025, 12, 31).add_months(2), date(2026, 2, 28));
    }

    #[test]
    fn formats_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_794_700_800), "2026-11-15T00:00:00Z");
        assert_eq!(rfc3339(1_794_700_800 - 1), "2026-11-14T23:59:59Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
    }
}
