//! Calendar arithmetic on Unix seconds, in UTC.
//!
//! Time expressions need only a handful of operations (start of a day, a
//! week, a month; a month earlier; the weekday) and must be exact around
//! month ends, year ends and leap days. A few lines of Howard Hinnant's
//! public-domain `days_from_civil` algorithms do that without a date crate.
//! Everything is UTC: the API carries no user time zone.

pub const SECONDS_PER_HOUR: i64 = 3_600;
pub const SECONDS_PER_DAY: i64 = 86_400;

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
        let valid = (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
        valid.then_some(Date { year, month, day })
    }

    /// The date that contains the instant `unix` (seconds since 1970).
    pub fn of_instant(unix: i64) -> Date {
        Date::from_days(unix.div_euclid(SECONDS_PER_DAY))
    }

    /// The date `days` days after 1970-01-01.
    pub fn from_days(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let day_of_era = z - era * 146_097;
        let year_of_era =
            (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
        let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let shifted_month = (5 * day_of_year + 2) / 153; // 0 = March
        let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
        let month = if shifted_month < 10 {
            shifted_month + 3
        } else {
            shifted_month - 9
        };
        Date {
            year: year_of_era + era * 400 + i64::from(month <= 2),
            month: month as u32,
            day: day as u32,
        }
    }

    /// Days since 1970-01-01 (negative before).
    pub fn days(self) -> i64 {
        let month = i64::from(self.month);
        // Counting years from March puts the leap day at the end of a year.
        let year = if month <= 2 { self.year - 1 } else { self.year };
        let era = year.div_euclid(400);
        let year_of_era = year - era * 400;
        let shifted_month = if month > 2 { month - 3 } else { month + 9 };
        let day_of_year = (153 * shifted_month + 2) / 5 + i64::from(self.day) - 1;
        let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        era * 146_097 + day_of_era - 719_468
    }

    /// The first second of this date.
    pub fn start(self) -> i64 {
        self.days() * SECONDS_PER_DAY
    }

    /// 0 for Monday through 6 for Sunday (ISO order: weeks start on Monday).
    pub fn weekday(self) -> u32 {
        // 1970-01-01 was a Thursday (3).
        (self.days() + 3).rem_euclid(7) as u32
    }

    /// The same day `delta` months away, clamped to the end of a shorter
    /// month (31 March minus one month is 28 or 29 February), the way people
    /// count "a month ago".
    pub fn add_months(self, delta: i64) -> Date {
        let index = self.year * 12 + i64::from(self.month) - 1 + delta;
        let year = index.div_euclid(12);
        let month = index.rem_euclid(12) as u32 + 1;
        let day = self.day.min(days_in_month(year, month));
        Date { year, month, day }
    }
}

pub fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
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
