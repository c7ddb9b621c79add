//! The grammar of time expressions: a preposition or not, then a point or
//! stretch of time, read from a question's words.

use super::units::Unit;
use super::vocabulary::{
    parse_count, parse_day, parse_iso, parse_month, parse_weekday, parse_year,
};
use super::{Bounds, Span};
use crate::calendar::Date;

pub(super) struct Parser<'a> {
    pub(super) words: &'a [String],
    pub(super) usable: &'a [bool],
    pub(super) now: i64,
    pub(super) today: Date,
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
    pub(super) fn expression(&self, at: usize) -> Parsed<Bounds> {
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
            _ => self
                .named_date(at)
                .or_else(|| self.point(at, false).map(|(s, n)| (s.as_range(), n))),
        }
    }

    /// A calendar date written without a preposition ("Incident
    /// 2025-02-03: checkout 502s", "the March 2025 migration") names the
    /// matter, not when its records changed: the postmortem, the follow-up
    /// tickets and the thread that closed it come on the days after. So it
    /// only bounds from below; "on 2025-02-03" and "in March 2025" are the
    /// day and the month. Relative times ("yesterday", "3 days ago") stay
    /// stretches.
    fn named_date(&self, at: usize) -> Parsed<Bounds> {
        let (span, next) = self
            .word(at)
            .and_then(parse_iso)
            .map(|span| (span, at + 1))
            .or_else(|| self.date(at, false))?;
        let bounds = Bounds {
            since: Some(span.start),
            until: None,
        };
        Some((bounds, next))
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
