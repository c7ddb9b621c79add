//! Times: vendors write them in several RFC 3339-like forms (or as Unix
//! seconds); documents carry RFC 3339 UTC (`2025-05-02T09:14:11Z`).

/// Normalizes `2025-05-02T09:14:11.000+0000`, `...+02:00`, `...Z` and
/// `2025-05-02` to RFC 3339 UTC. Returns `None` for anything else.
pub fn normalize(text: &str) -> Option<String> {
    to_unix(text).map(from_unix)
}

/// Unix seconds of any form [`normalize`] accepts.
pub fn to_unix(text: &str) -> Option<i64> {
    let t = text.trim();
    let (y, m, d) = parse_date(t.get(..10)?)?;
    if t.len() == 10 {
        return Some(days_from_civil(y, m, d) * 86_400);
    }
    let rest = t.get(10..)?.strip_prefix(['T', ' '])?;
    let hh: i64 = rest.get(0..2)?.parse().ok()?;
    let mm: i64 = rest.get(3..5)?.parse().ok()?;
    let ss: i64 = rest.get(6..8)?.parse().ok()?;
    let mut zone = &rest[8..];
    if let Some(frac) = zone.strip_prefix('.') {
        zone = frac.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let offset_seconds = match zone {
        "" | "Z" | "z" => 0,
        z => {
            let sign = match &z[..1] {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let digits: String = z[1..].chars().filter(|c| *c != ':').collect();
            if digits.len() != 4 {
                return None;
            }
            let h: i64 = digits[..2].parse().ok()?;
            let m: i64 = digits[2..].parse().ok()?;
            sign * (h * 3600 + m * 60)
        }
    };
    Some(days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss - offset_seconds)
}

/// RFC 3339 UTC from Unix seconds.
pub fn from_unix(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// RFC 3339 UTC from a decimal Unix time like Slack's `1714650000.001200`.
pub fn from_unix_text(text: &str) -> Option<String> {
    let whole = text.split('.').next()?;
    Some(from_unix(whole.parse().ok()?))
}

/// The date part (`2025-05-02`) of an RFC 3339 time.
pub fn date_part(rfc3339: &str) -> &str {
    rfc3339.get(..10).unwrap_or(rfc3339)
}

fn parse_date(date: &str) -> Option<(i64, i64, i64)> {
    let b = date.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y = date[..4].parse().ok()?;
    let m = date[5..7].parse().ok()?;
    let d = date[8..].parse().ok()?;
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m, d))
}

// Howard Hinnant's days-from-civil algorithms (public domain).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_vendor_forms() {
        assert_eq!(
            normalize("2025-05-02T09:14:11Z").unwrap(),
            "2025-05-02T09:14:11Z"
        );
        assert_eq!(
            normalize("2025-05-02T09:14:11.000+0000").unwrap(),
            "2025-05-02T09:14:11Z"
        );
        assert_eq!(
            normalize("2025-05-02T09:14:11.123Z").unwrap(),
            "2025-05-02T09:14:11Z"
        );
        assert_eq!(
            normalize("2025-05-02T11:14:11+02:00").unwrap(),
            "2025-05-02T09:14:11Z"
        );
        assert_eq!(normalize("2025-05-02").unwrap(), "2025-05-02T00:00:00Z");
        assert_eq!(normalize("yesterday"), None);
    }

    #[test]
    fn unix_times() {
        assert_eq!(from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            from_unix_text("1714650000.001200").unwrap(),
            "2024-05-02T11:40:00Z"
        );
        assert_eq!(from_unix(951_782_400), "2000-02-29T00:00:00Z");
    }
}
