//! Time expressions: "last week", "since March", "in the last 24 hours".
//!
//! A question that names a time becomes the `since`/`until` bounds the
//! connectors receive, so that vendors filter at the source instead of us
//! ranking records from the wrong year. Everything is UTC and relative to
//! the `now` the caller passes, which keeps this a pure function.
//!
//! The grammar is deliberately conservative: words that are also ordinary
//! words ("may", "march", "sat", a bare "2025" that could be an issue
//! number) count as times only after a preposition ("in May", "since
//! 2025") or, for a month, before a year ("May 2025"). Whatever is not
//! understood stays a search term.

use crate::calendar::{Date, SECONDS_PER_DAY, SECONDS_PER_HOUR};

/// Bounds found in a question, as inclusive Unix seconds. `None` means
/// open: "since March" has no end, and leaving `until` out rather than
/// writing "now" keeps records written a moment ago, whatever the vendor's
/// clock says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub since: Option<i64>,
    pub until: Option<i64>,
}

impl Bounds {
    /// Both expressions must hold ("since March before June"): the later
    /// start and the earlier end win.
    fn intersect(self, other: Bounds) -> Bounds {
        Bounds {
            since: max_option(self.since, other.since),
            until: min_option(self.until, other.until),
        }
    }
}

fn max_option(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn min_option(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What the question found: the bounds, and which words made up time
/// expressions (so that they are not searched for as terms).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TimeMatch {
    pub bounds: Bounds,
    pub used: Vec<bool>,
}

/// Finds the time expressions among `words` (lower-cased, as
/// [`super::words::words`] cuts them). Words whose `usable` flag is false
/// (quoted text: the user meant it literally) are never part of one.
pub(crate) fn find(words: &[String], usable: &[bool], now: i64) -> TimeMatch {
    let parser = Parser {
        words,
        usable,
        now,
        today: Date::of_instant(now),
    };
    let mut bounds = Bounds::default();
    let mut used = vec![false; words.len()];
    let mut at = 0;
    while at < words.len() {
        match parser.expression(at) {
            Some((found, next)) => {
                bounds = bounds.intersect(found);
                used[at..next].fill(true);
                at = next;
            }
            None => at += 1,
        }
    }
    TimeMatch { bounds, used }
}

/// A stretch of time: `start` inclusive; `end` the inclusive last second,
/// or `None` when it runs up to now ("this week", "the last 3 days").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    start: i64,
    end: Option<i64>,
}

impl Span {
    fn closed(start: i64, next_start: i64) -> Span {
        Span {
            start,
            end: Some(next_start - 1),
        }
    }

    fn day(date: Date) -> Span {
        Span::closed(date.start(), date.start() + SECONDS_PER_DAY)
    }

    fn month(year: i64, month: u32) -> Span {
        let first = Date {
            year,
            month,
            day: 1,
        };
        Span::closed(first.start(), first.add_months(1).start())
    }

    fn year(year: i64) -> Span {
        Span::month(year, 1).through(Span::month(year, 12))
    }

    /// From the start of `self` to the end of `last`.
    fn through(self, last: Span) -> Span {
        Span {
            start: self.start,
            end: last.end,
        }
    }

    fn as_range(self) -> Bounds {
        Bounds {
            since: Some(self.start),
            until: self.end,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Hour,
    Day,
    Week,
    Month,
    Year,
}

impl Unit {
    fn parse(word: &str) -> Option<Unit> {
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
    fn parse_compact(word: &str) -> Option<(i64, Unit)> {
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
    fn before(self, instant: i64, count: i64) -> i64 {
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
    fn containing(self, instant: i64) -> Span {
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

fn parse_month(word: &str) -> Option<u32> {
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
fn parse_weekday(word: &str) -> Option<u32> {
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
fn parse_count_digits(word: &str) -> Option<i64> {
    if word.is_empty() || word.len() > 5 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse().ok().filter(|count| *count > 0)
}

fn parse_count(word: &str) -> Option<i64> {
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
fn parse_day(word: &str) -> Option<u32> {
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
fn parse_year(word: &str) -> Option<i64> {
    if word.len() != 4 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse()
        .ok()
        .filter(|year| (1970..=2100).contains(year))
}

/// `2025-03-04`, `2025/03/04` (a day) or `2025-03` (a month).
fn parse_iso(word: &str) -> Option<Span> {
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

struct Parser<'a> {
    words: &'a [String],
    usable: &'a [bool],
    now: i64,
    today: Date,
}

/// A parse result: what was found and the index of the first word after it.
type Parsed<T> = Option<(T, usize)>;

impl Parser<'_> {
    fn word(&self, at: usize) -> Option<&str> {
        let usable = self.usable.get(at).copied().unwrap_or(false);
        usable
            .then(|| self.words.get(at).map(String::as_str))
            .flatten()
    }

    fn is(&self, at: usize, expected: &[&str]) -> bool {
        self.word(at).is_some_and(|word| expected.contains(&word))
    }

    /// One time expression starting at word `at`, as bounds.
    fn expression(&self, at: usize) -> Parsed<Bounds> {
        let word = self.word(at)?;
        let next = at + 1;
        match word {
            "between" => self.interval(next, &["and"]),
            "from" => self
                .interval(next, &["to", "until", "till", "through", "thru"])
                .or_else(|| self.since(next)),
            "since" => self.since(next),
            "after" => self.after(next),
            "before" => self.before(next),
            "until" | "till" | "through" | "thru" => self.until(next),
            "in" | "on" | "during" => self.point(next, true).map(|(s, n)| (s.as_range(), n)),
            "within" | "over" | "for" => {
                self.rolling_with_the(next).map(|(s, n)| (s.as_range(), n))
            }
            _ => self.point(at, false).map(|(s, n)| (s.as_range(), n)),
        }
    }

    fn since(&self, at: usize) -> Parsed<Bounds> {
        let (span, next) = self.point(at, true)?;
        let bounds = Bounds {
            since: Some(span.start),
            until: None,
        };
        Some((bounds, next))
    }

    /// "after March" starts when March is over; "after today" is the
    /// future, so it keeps today's start rather than excluding everything.
    fn after(&self, at: usize) -> Parsed<Bounds> {
        let (span, next) = self.point(at, true)?;
        let bounds = Bounds {
            since: Some(span.end.map_or(span.start, |end| end + 1)),
            until: None,
        };
        Some((bounds, next))
    }

    /// "before March" ends when March begins.
    fn before(&self, at: usize) -> Parsed<Bounds> {
        let (span, next) = self.point(at, true)?;
        let bounds = Bounds {
            since: None,
            until: Some(span.start - 1),
        };
        Some((bounds, next))
    }

    /// "until March" includes March, as "through" does: people who say
    /// "until Friday" mean Friday's records too.
    fn until(&self, at: usize) -> Parsed<Bounds> {
        let (span, next) = self.point(at, true)?;
        let bounds = Bounds {
            since: None,
            until: span.end,
        };
        Some((bounds, next))
    }

    /// "between X and Y", "from X to Y": from the start of the earlier to
    /// the end of the later, whichever order the user wrote them in.
    fn interval(&self, at: usize, separators: &[&str]) -> Parsed<Bounds> {
        let (first, separator) = self.point(at, true)?;
        if !self.is(separator, separators) {
            return None;
        }
        let (second, next) = self.point(separator + 1, true)?;
        let (earlier, later) = if second.start < first.start {
            (second, first)
        } else {
            (first, second)
        };
        Some((earlier.through(later).as_range(), next))
    }

    /// A point or stretch of time. `after_preposition` admits the forms
    /// that would be ordinary words on their own ("may", "monday", "2025").
    fn point(&self, at: usize, after_preposition: bool) -> Parsed<Span> {
        let word = self.word(at)?;
        let next = at + 1;
        let simple = match word {
            "today" => Some(Span {
                start: self.today.start(),
                end: None,
            }),
            "yesterday" => Some(Span::day(Date::from_days(self.today.days() - 1))),
            _ => parse_iso(word),
        };
        if let Some(span) = simple {
            return Some((span, next));
        }
        match word {
            "this" => self.this(next),
            "last" => self.last(next).or_else(|| self.rolling(next)),
            "past" => self.rolling(next),
            "the" => self.rolling_after_the(next),
            _ => self
                .ago(at)
                .or_else(|| self.date(at, after_preposition))
                .or_else(|| after_preposition.then(|| self.bare(at)).flatten()),
        }
    }

    /// "this week" (since Monday), "this month", "this year": up to now.
    fn this(&self, at: usize) -> Parsed<Span> {
        let unit = self.word(at).and_then(Unit::parse)?;
        if !matches!(unit, Unit::Week | Unit::Month | Unit::Year) {
            return None;
        }
        let span = Span {
            start: unit.containing(self.now).start,
            end: None,
        };
        Some((span, at + 1))
    }

    /// "last week" (the previous Monday to Sunday), "last month", "last
    /// year": whole calendar units; "last friday": the most recent Friday
    /// before today.
    fn last(&self, at: usize) -> Parsed<Span> {
        let word = self.word(at)?;
        if let Some(weekday) = parse_weekday(word) {
            let back = (i64::from(self.today.weekday()) - i64::from(weekday) + 6).rem_euclid(7) + 1;
            return Some((Span::day(Date::from_days(self.today.days() - back)), at + 1));
        }
        if let Some(month) = parse_month(word) {
            return self.last_month_named(month, at + 1);
        }
        let unit =
            Unit::parse(word).filter(|u| matches!(u, Unit::Week | Unit::Month | Unit::Year))?;
        let current = unit.containing(self.now);
        Some((unit.containing(current.start - 1), at + 1))
    }

    /// "last March": the most recent March that is over (in March 2026,
    /// March 2025).
    fn last_month_named(&self, month: u32, next: usize) -> Parsed<Span> {
        let recent = self.recent(month, 1)?;
        let year = if recent.year == self.today.year && month == self.today.month {
            recent.year - 1
        } else {
            recent.year
        };
        Some((Span::month(year, month), next))
    }

    /// "[the] last 7 days", "past 24 hours", "past week": a rolling window
    /// ending now. Without a count it is one unit ("the past hour").
    fn rolling(&self, at: usize) -> Parsed<Span> {
        let (count, unit, next) = self.count_and_unit(at).or_else(|| {
            let unit = Unit::parse(self.word(at)?)?;
            Some((1, unit, at + 1))
        })?;
        let span = Span {
            start: unit.before(self.now, count),
            end: None,
        };
        Some((span, next))
    }

    /// "the last week" / "the past week": with "the", "last" means a
    /// rolling window ("in the last week" = the last seven days), unlike
    /// the calendar "last week".
    fn rolling_after_the(&self, at: usize) -> Parsed<Span> {
        if !self.is(at, &["last", "past"]) {
            return None;
        }
        self.rolling(at + 1)
    }

    /// "within the last 3 days", "over the past week", "for the last 2 months".
    fn rolling_with_the(&self, at: usize) -> Parsed<Span> {
        let at = if self.is(at, &["the"]) { at + 1 } else { at };
        if !self.is(at, &["last", "past"]) {
            return None;
        }
        self.rolling(at + 1)
    }

    /// "7 days", "two weeks", "24h".
    fn count_and_unit(&self, at: usize) -> Option<(i64, Unit, usize)> {
        let word = self.word(at)?;
        if let Some((count, unit)) = Unit::parse_compact(word) {
            return Some((count, unit, at + 1));
        }
        let count = parse_count(word)?;
        let unit = Unit::parse(self.word(at + 1)?)?;
        Some((count, unit, at + 2))
    }

    /// "3 days ago", "two weeks ago": the calendar day, week... that
    /// contains that instant.
    fn ago(&self, at: usize) -> Parsed<Span> {
        let (count, unit, next) = self.count_and_unit(at)?;
        if !self.is(next, &["ago"]) {
            return None;
        }
        Some((unit.containing(unit.before(self.now, count)), next + 1))
    }

    /// Dates written with a month name: "March 2025", "March 4",
    /// "March 4th, 2025", "4 March 2025". Without a year they need a
    /// preposition and mean the most recent such date not in the future.
    fn date(&self, at: usize, after_preposition: bool) -> Parsed<Span> {
        let first = self.word(at)?;
        if let Some(month) = parse_month(first) {
            return self.month_first(month, at + 1, after_preposition);
        }
        let day = parse_day(first)?;
        let month = self.word(at + 1).and_then(parse_month)?;
        self.day_and_month(day, month, at + 2, after_preposition)
    }

    /// A month name, then maybe a day, then maybe a year. A day or year
    /// that does not fit ("February 29 2025") makes the whole thing not a
    /// date, rather than falling back to "February" alone.
    fn month_first(&self, month: u32, at: usize, after_preposition: bool) -> Parsed<Span> {
        if let Some(year) = self.word(at).and_then(parse_year) {
            return Some((Span::month(year, month), at + 1));
        }
        if let Some(day) = self.word(at).and_then(parse_day) {
            return self.day_and_month(day, month, at + 1, after_preposition);
        }
        if !after_preposition {
            return None;
        }
        let date = self.recent(month, 1)?;
        Some((Span::month(date.year, month), at))
    }

    fn day_and_month(
        &self,
        day: u32,
        month: u32,
        at: usize,
        after_preposition: bool,
    ) -> Parsed<Span> {
        if let Some(year) = self.word(at).and_then(parse_year) {
            return Some((Span::day(Date::new(year, month, day)?), at + 1));
        }
        if !after_preposition {
            return None;
        }
        Some((Span::day(self.recent(month, day)?), at))
    }

    /// The most recent `month`/`day` that is not in the future: "since
    /// March" in February 2026 means March 2025. Looks back far enough to
    /// find a 29 February.
    fn recent(&self, month: u32, day: u32) -> Option<Date> {
        (self.today.year - 8..=self.today.year)
            .rev()
            .filter_map(|year| Date::new(year, month, day))
            .find(|date| *date <= self.today)
    }

    /// Forms valid only after a preposition: a weekday (the most recent,
    /// today included) or a year. Months are handled by [`Parser::date`].
    fn bare(&self, at: usize) -> Parsed<Span> {
        let word = self.word(at)?;
        if let Some(weekday) = parse_weekday(word) {
            let back = (i64::from(self.today.weekday()) - i64::from(weekday)).rem_euclid(7);
            return Some((Span::day(Date::from_days(self.today.days() - back)), at + 1));
        }
        let year = parse_year(word)?;
        Some((Span::year(year), at + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::super::words::words;
    use super::*;
    use crate::calendar::rfc3339;

    /// Sunday 2026-11-15 14:30:00 UTC.
    const SUNDAY: i64 = 1_794_753_000;

    fn at(date: &str, time: &str) -> i64 {
        let parts: Vec<u32> = date.split('-').map(|p| p.parse().unwrap()).collect();
        let clock: Vec<i64> = time.split(':').map(|p| p.parse().unwrap()).collect();
        Date::new(i64::from(parts[0]), parts[1], parts[2])
            .unwrap()
            .start()
            + clock[0] * 3600
            + clock[1] * 60
            + clock[2]
    }

    /// The bounds of `question` at `now`, as RFC 3339 strings.
    fn bounds_at(question: &str, now: i64) -> (Option<String>, Option<String>) {
        let words = words(question);
        let usable = vec![true; words.len()];
        let found = find(&words, &usable, now);
        (
            found.bounds.since.map(rfc3339),
            found.bounds.until.map(rfc3339),
        )
    }

    fn bounds(question: &str) -> (Option<String>, Option<String>) {
        bounds_at(question, SUNDAY)
    }

    fn range(since: &str, until: &str) -> (Option<String>, Option<String>) {
        (Some(since.to_string()), Some(until.to_string()))
    }

    fn from(since: &str) -> (Option<String>, Option<String>) {
        (Some(since.to_string()), None)
    }

    fn to(until: &str) -> (Option<String>, Option<String>) {
        (None, Some(until.to_string()))
    }

    fn none() -> (Option<String>, Option<String>) {
        (None, None)
    }

    #[test]
    fn the_test_clock_is_a_sunday_afternoon() {
        assert_eq!(rfc3339(SUNDAY), "2026-11-15T14:30:00Z");
        assert_eq!(Date::of_instant(SUNDAY).weekday(), 6);
        assert_eq!(at("2026-11-15", "14:30:00"), SUNDAY);
    }

    #[test]
    fn days() {
        assert_eq!(bounds("today"), from("2026-11-15T00:00:00Z"));
        assert_eq!(
            bounds("yesterday"),
            range("2026-11-14T00:00:00Z", "2026-11-14T23:59:59Z")
        );
        let new_year = at("2026-01-01", "08:00:00");
        assert_eq!(
            bounds_at("yesterday", new_year),
            range("2025-12-31T00:00:00Z", "2025-12-31T23:59:59Z")
        );
        let leap = at("2024-03-01", "08:00:00");
        assert_eq!(
            bounds_at("yesterday", leap),
            range("2024-02-29T00:00:00Z", "2024-02-29T23:59:59Z")
        );
    }

    #[test]
    fn weeks_start_on_monday() {
        assert_eq!(bounds("this week"), from("2026-11-09T00:00:00Z"));
        assert_eq!(
            bounds("last week"),
            range("2026-11-02T00:00:00Z", "2026-11-08T23:59:59Z")
        );
        let monday = at("2026-11-16", "00:00:00");
        assert_eq!(bounds_at("this week", monday), from("2026-11-16T00:00:00Z"));
        assert_eq!(
            bounds_at("last week", monday),
            range("2026-11-09T00:00:00Z", "2026-11-15T23:59:59Z")
        );
        // A week across a year boundary: Thursday 1 January 2026.
        let new_year = at("2026-01-01", "12:00:00");
        assert_eq!(
            bounds_at("this week", new_year),
            from("2025-12-29T00:00:00Z")
        );
        assert_eq!(
            bounds_at("last week", new_year),
            range("2025-12-22T00:00:00Z", "2025-12-28T23:59:59Z")
        );
    }

    #[test]
    fn months_and_years() {
        assert_eq!(bounds("this month"), from("2026-11-01T00:00:00Z"));
        assert_eq!(
            bounds("last month"),
            range("2026-10-01T00:00:00Z", "2026-10-31T23:59:59Z")
        );
        assert_eq!(bounds("this year"), from("2026-01-01T00:00:00Z"));
        assert_eq!(
            bounds("last year"),
            range("2025-01-01T00:00:00Z", "2025-12-31T23:59:59Z")
        );
        let january = at("2026-01-10", "00:00:00");
        assert_eq!(
            bounds_at("last month", january),
            range("2025-12-01T00:00:00Z", "2025-12-31T23:59:59Z")
        );
        let leap_march = at("2024-03-31", "23:59:59");
        assert_eq!(
            bounds_at("last month", leap_march),
            range("2024-02-01T00:00:00Z", "2024-02-29T23:59:59Z")
        );
    }

    #[test]
    fn rolling_windows() {
        assert_eq!(bounds("last 7 days"), from("2026-11-08T14:30:00Z"));
        assert_eq!(bounds("past 3 weeks"), from("2026-10-25T14:30:00Z"));
        assert_eq!(bounds("in the last 24 hours"), from("2026-11-14T14:30:00Z"));
        assert_eq!(bounds("in the last 24h"), from("2026-11-14T14:30:00Z"));
        assert_eq!(bounds("last two months"), from("2026-09-15T14:30:00Z"));
        assert_eq!(bounds("the past hour"), from("2026-11-15T13:30:00Z"));
        assert_eq!(bounds("past week"), from("2026-11-08T14:30:00Z"));
        assert_eq!(bounds("in the last week"), from("2026-11-08T14:30:00Z"));
        assert_eq!(
            bounds("within the past 2 years"),
            from("2024-11-15T14:30:00Z")
        );
        assert_eq!(
            bounds("over the last 10 days"),
            from("2026-11-05T14:30:00Z")
        );
        let end_of_march = at("2025-03-31", "10:00:00");
        assert_eq!(
            bounds_at("last 1 month", end_of_march),
            from("2025-02-28T10:00:00Z")
        );
        let leap_day = at("2024-02-29", "10:00:00");
        assert_eq!(
            bounds_at("past year", leap_day),
            from("2023-02-28T10:00:00Z")
        );
    }

    #[test]
    fn since_a_month_is_the_most_recent_first_of_that_month() {
        assert_eq!(bounds("since March"), from("2026-03-01T00:00:00Z"));
        assert_eq!(bounds("since november"), from("2026-11-01T00:00:00Z"));
        assert_eq!(bounds("since December"), from("2025-12-01T00:00:00Z"));
        assert_eq!(bounds("since dec"), from("2025-12-01T00:00:00Z"));
        assert_eq!(bounds("since sept"), from("2026-09-01T00:00:00Z"));
        let february = at("2026-02-20", "00:00:00");
        assert_eq!(
            bounds_at("since March", february),
            from("2025-03-01T00:00:00Z")
        );
        let first_of_march = at("2026-03-01", "00:00:00");
        assert_eq!(
            bounds_at("since March", first_of_march),
            from("2026-03-01T00:00:00Z")
        );
    }

    #[test]
    fn since_explicit_dates_and_weekdays() {
        assert_eq!(bounds("since March 2025"), from("2025-03-01T00:00:00Z"));
        assert_eq!(bounds("since 2025-03-04"), from("2025-03-04T00:00:00Z"));
        assert_eq!(bounds("since 2025/03/04"), from("2025-03-04T00:00:00Z"));
        assert_eq!(bounds("since 2025"), from("2025-01-01T00:00:00Z"));
        assert_eq!(bounds("since Monday"), from("2026-11-09T00:00:00Z"));
        assert_eq!(bounds("since sunday"), from("2026-11-15T00:00:00Z"));
        assert_eq!(bounds("since yesterday"), from("2026-11-14T00:00:00Z"));
        assert_eq!(bounds("since last week"), from("2026-11-02T00:00:00Z"));
        assert_eq!(bounds("since March 4th"), from("2026-03-04T00:00:00Z"));
        assert_eq!(bounds("since 4 march 2025"), from("2025-03-04T00:00:00Z"));
        assert_eq!(bounds("since 2 weeks ago"), from("2026-10-26T00:00:00Z"));
        assert_eq!(bounds("from 2025-03-04"), from("2025-03-04T00:00:00Z"));
    }

    #[test]
    fn since_a_leap_day_finds_the_last_leap_year() {
        assert_eq!(bounds("since feb 29"), from("2024-02-29T00:00:00Z"));
        assert_eq!(
            bounds("since 29 february 2024"),
            from("2024-02-29T00:00:00Z")
        );
        // Not a date: 29 February 2025 does not exist.
        assert_eq!(bounds("since february 29 2025"), none());
    }

    #[test]
    fn before_and_until() {
        assert_eq!(bounds("before March 2025"), to("2025-02-28T23:59:59Z"));
        assert_eq!(bounds("before March 2024"), to("2024-02-29T23:59:59Z"));
        assert_eq!(bounds("until March 2025"), to("2025-03-31T23:59:59Z"));
        assert_eq!(bounds("until 2025-03-04"), to("2025-03-04T23:59:59Z"));
        assert_eq!(bounds("before 2025"), to("2024-12-31T23:59:59Z"));
        assert_eq!(bounds("through friday"), to("2026-11-13T23:59:59Z"));
        assert_eq!(bounds("after March 2025"), from("2025-04-01T00:00:00Z"));
        assert_eq!(bounds("after december 2025"), from("2026-01-01T00:00:00Z"));
    }

    #[test]
    fn in_and_on() {
        assert_eq!(
            bounds("in March"),
            range("2026-03-01T00:00:00Z", "2026-03-31T23:59:59Z")
        );
        assert_eq!(
            bounds("in February 2024"),
            range("2024-02-01T00:00:00Z", "2024-02-29T23:59:59Z")
        );
        assert_eq!(
            bounds("in feb 2100"),
            range("2100-02-01T00:00:00Z", "2100-02-28T23:59:59Z")
        );
        assert_eq!(
            bounds("in December"),
            range("2025-12-01T00:00:00Z", "2025-12-31T23:59:59Z")
        );
        assert_eq!(
            bounds("in 2025"),
            range("2025-01-01T00:00:00Z", "2025-12-31T23:59:59Z")
        );
        assert_eq!(
            bounds("on 2025-03-04"),
            range("2025-03-04T00:00:00Z", "2025-03-04T23:59:59Z")
        );
        assert_eq!(
            bounds("on Monday"),
            range("2026-11-09T00:00:00Z", "2026-11-09T23:59:59Z")
        );
        assert_eq!(
            bounds("during 2025-03"),
            range("2025-03-01T00:00:00Z", "2025-03-31T23:59:59Z")
        );
        assert_eq!(
            bounds("on March 4th, 2025"),
            range("2025-03-04T00:00:00Z", "2025-03-04T23:59:59Z")
        );
    }

    #[test]
    fn bare_forms_that_are_unambiguous() {
        assert_eq!(
            bounds("March 2025"),
            range("2025-03-01T00:00:00Z", "2025-03-31T23:59:59Z")
        );
        assert_eq!(
            bounds("2025-03-04"),
            range("2025-03-04T00:00:00Z", "2025-03-04T23:59:59Z")
        );
        assert_eq!(
            bounds("last friday"),
            range("2026-11-13T00:00:00Z", "2026-11-13T23:59:59Z")
        );
        assert_eq!(
            bounds("last sunday"),
            range("2026-11-08T00:00:00Z", "2026-11-08T23:59:59Z")
        );
        assert_eq!(
            bounds("3 days ago"),
            range("2026-11-12T00:00:00Z", "2026-11-12T23:59:59Z")
        );
        assert_eq!(
            bounds("a month ago"),
            range("2026-10-01T00:00:00Z", "2026-10-31T23:59:59Z")
        );
    }

    #[test]
    fn last_named_month_is_over() {
        assert_eq!(
            bounds("last March"),
            range("2026-03-01T00:00:00Z", "2026-03-31T23:59:59Z")
        );
        assert_eq!(
            bounds("last november"),
            range("2025-11-01T00:00:00Z", "2025-11-30T23:59:59Z")
        );
        assert_eq!(
            bounds("last december"),
            range("2025-12-01T00:00:00Z", "2025-12-31T23:59:59Z")
        );
    }

    #[test]
    fn huge_counts_stop_at_1970() {
        assert_eq!(bounds("last 99999 years"), from("1970-01-01T00:00:00Z"));
        assert_eq!(bounds("past 99999 days"), from("1970-01-01T00:00:00Z"));
    }

    #[test]
    fn ordinary_words_are_not_times() {
        assert_eq!(bounds("may I see the march roadmap"), none());
        assert_eq!(bounds("issue 2025 monday standup"), none());
        assert_eq!(bounds("last deploy"), none());
        assert_eq!(bounds("this release"), none());
        assert_eq!(bounds("since the outage"), none());
        assert_eq!(bounds("in 12 places"), none());
        assert_eq!(bounds("2025-13-01"), none());
        assert_eq!(bounds("in 1850"), none());
        assert_eq!(bounds("last 0 days"), none());
        assert_eq!(bounds("last 999999999 days"), none());
    }

    #[test]
    fn intervals() {
        assert_eq!(
            bounds("between March 2025 and May 2025"),
            range("2025-03-01T00:00:00Z", "2025-05-31T23:59:59Z")
        );
        assert_eq!(
            bounds("from 2025-03-04 to 2025-03-10"),
            range("2025-03-04T00:00:00Z", "2025-03-10T23:59:59Z")
        );
        assert_eq!(
            bounds("between 2025-03-10 and 2025-03-04"),
            range("2025-03-04T00:00:00Z", "2025-03-10T23:59:59Z")
        );
    }

    #[test]
    fn several_expressions_intersect() {
        assert_eq!(
            bounds("since March 2025 before June 2025"),
            range("2025-03-01T00:00:00Z", "2025-05-31T23:59:59Z")
        );
        assert_eq!(
            bounds("this year since March"),
            from("2026-03-01T00:00:00Z")
        );
    }

    #[test]
    fn marks_the_words_it_used() {
        let words = words("bugs since March 2025 in checkout last week");
        let usable = vec![true; words.len()];
        let found = find(&words, &usable, SUNDAY);
        assert_eq!(
            found.used,
            [false, true, true, true, false, false, true, true]
        );
    }

    #[test]
    fn quoted_words_are_never_times() {
        let words = words("last week");
        let found = find(&words, &[false, false], SUNDAY);
        assert_eq!(found.bounds, Bounds::default());
        assert_eq!(found.used, [false, false]);
    }
}
