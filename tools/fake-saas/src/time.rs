//! Minimal UTC calendar arithmetic (no time-zone database, no wall clock).
//!
//! The dataset is built from fixed dates, so everything here is pure. The calendar
//! itself is jiff's.

use jiff::ToSpan;
use jiff::civil::Date;

const EPOCH: Date = jiff::civil::date(1970, 1, 1);

/// Days since 1970-01-01 for a proleptic Gregorian date.
///
/// Counted from the first of the month, so that a day past the month's end rolls on
/// into the next month (`2025-02-31` is `2025-03-03`), as callers have always had it.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let first = i16::try_from(y)
        .ok()
        .zip(i8::try_from(m).ok())
        .and_then(|(y, m)| Date::new(y, m, 1).ok())
        .unwrap_or_else(|| panic!("no such month {y}-{m}"));
    let days = EPOCH
        .until(first)
        .expect("dates are in jiff's range")
        .get_days();
    i64::from(days) + i64::from(d) - 1
}

/// The (year, month, day) of a day count since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let date = EPOCH
        .checked_add(z.days())
        .unwrap_or_else(|_| panic!("{z} days from 1970 is outside jiff's range"));
    (
        i64::from(date.year()),
        date.month() as u32,
        date.day() as u32,
    )
}

/// Broken-down UTC time of a unix timestamp.
pub fn parts(unix: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = unix.div_euclid(86400);
    let secs = unix.rem_euclid(86400);
    let (y, m, d) = civil_from_days(days);
    (
        y,
        m,
        d,
        (secs / 3600) as u32,
        (secs % 3600 / 60) as u32,
        (secs % 60) as u32,
    )
}

/// `2025-05-02T09:14:11Z` (GitHub).
pub fn rfc3339(unix: i64) -> String {
    let (y, mo, d, h, mi, s) = parts(unix);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `2025-05-02T09:14:11.123Z` (Linear, Notion).
pub fn rfc3339_millis(unix: i64, millis: u32) -> String {
    let (y, mo, d, h, mi, s) = parts(unix);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{millis:03}Z")
}

/// `2025-05-02T09:14:11.000+0000` (Jira).
pub fn jira(unix: i64) -> String {
    let (y, mo, d, h, mi, s) = parts(unix);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.000+0000")
}

/// Unix time of midnight UTC on a `YYYY-MM-DD` date.
pub fn unix_of_date(y: i64, m: u32, d: u32) -> i64 {
    days_from_civil(y, m, d) * 86400
}

/// A parsed date or date-time, with its precision, so that `<= 2025-01-31` can mean
/// "until the end of that day".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instant {
    /// First second covered.
    pub start: i64,
    /// One past the last second covered (a day for a date, a second or minute otherwise).
    pub end: i64,
}

/// Parses `YYYY-MM-DD`, `YYYY/MM/DD`, `YYYY-MM-DD HH:MM`, `YYYY-MM-DDTHH:MM:SS[.fff][Z|+hh:mm|+hhmm]`.
pub fn parse(s: &str) -> Option<Instant> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 10 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if t.bytes().all(|c| c.is_ascii_digit()) {
            t.parse().ok()
        } else {
            None
        }
    };
    if !(b[4] == b'-' || b[4] == b'/') || b[7] != b[4] {
        return None;
    }
    let (y, m, d) = (num(0..4)?, num(5..7)? as u32, num(8..10)? as u32);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let day = unix_of_date(y, m, d);
    if b.len() == 10 {
        return Some(Instant {
            start: day,
            end: day + 86400,
        });
    }
    if !(b[10] == b'T' || b[10] == b' ') || b.len() < 16 || b[13] != b':' {
        return None;
    }
    let (h, mi) = (num(11..13)?, num(14..16)?);
    let mut t = day + h * 3600 + mi * 60;
    let mut rest = &s[16..];
    let mut precision = 60;
    if let Some(r) = rest.strip_prefix(':') {
        let sec: i64 = r.get(0..2)?.parse().ok()?;
        t += sec;
        precision = 1;
        rest = &r[2..];
        if let Some(r) = rest.strip_prefix('.') {
            let n = r.bytes().take_while(|c| c.is_ascii_digit()).count();
            rest = &r[n..];
        }
    }
    match rest {
        "" | "Z" | "z" => {}
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => -1,
                b'-' => 1,
                _ => return None,
            };
            let digits: String = rest[1..].chars().filter(|c| c.is_ascii_digit()).collect();
            if digits.len() != 4 {
                return None;
            }
            let oh: i64 = digits[0..2].parse().ok()?;
            let om: i64 = digits[2..4].parse().ok()?;
            t += sign * (oh * 3600 + om * 60);
        }
    }
    Some(Instant {
        start: t,
        end: t + precision,
    })
}

/// A range of unix seconds `[lo, hi)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub lo: i64,
    pub hi: i64,
}

impl Default for Range {
    fn default() -> Self {
        Range {
            lo: i64::MIN,
            hi: i64::MAX,
        }
    }
}

impl Range {
    pub fn contains(&self, t: i64) -> bool {
        self.lo <= t && t < self.hi
    }
    pub fn intersect(&mut self, other: Range) {
        self.lo = self.lo.max(other.lo);
        self.hi = self.hi.min(other.hi);
    }
    pub fn from_op(op: &str, at: Instant) -> Option<Range> {
        let mut r = Range::default();
        match op {
            ">=" => r.lo = at.start,
            ">" => r.lo = at.end,
            "<=" => r.hi = at.end,
            "<" => r.hi = at.start,
            "=" | "" => {
                r.lo = at.start;
                r.hi = at.end;
            }
            _ => return None,
        }
        Some(r)
    }
}

/// Unix seconds now (only used for token expiry and rate-limit reset headers, never for data).
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2025, 2, 31), days_from_civil(2025, 3, 3));
        assert_eq!(rfc3339(1714650000), "2024-05-02T11:40:00Z");
        for d in [-1000, 0, 19000, 20500] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        let i = parse("2025-05-02T09:14:11Z").unwrap();
        assert_eq!(rfc3339(i.start), "2025-05-02T09:14:11Z");
        let i = parse("2025-05-02T11:14:11+02:00").unwrap();
        assert_eq!(rfc3339(i.start), "2025-05-02T09:14:11Z");
        let i = parse("2025-05-02").unwrap();
        assert_eq!(i.end - i.start, 86400);
        assert_eq!(jira(i.start), "2025-05-02T00:00:00.000+0000");
        assert!(parse("2025-13-02").is_none());
        assert!(parse("yesterday").is_none());
    }
}
