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
//!
//! - [`vocabulary`]: the words of times: months, weekdays, counts, days,
//!   years and ISO dates;
//! - [`units`]: hours to years, counted back from an instant or containing it;
//! - [`parser`]: the grammar, one expression at a time.

mod parser;
mod units;
mod vocabulary;

use crate::calendar::{Date, SECONDS_PER_DAY};
use parser::Parser;

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
        match parser
            .expression(at)
            .filter(|(_, next)| !names_a_year_before_the_tools(&words[at..*next]))
        {
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

/// The first year a company's tools hold records of.
const EARLIEST_RECORDS: u32 = 1990;

/// Whether an expression names a year before any record a tool holds
/// ("bands formed since 1974", "before 1900"): then the year is the
/// subject of the question, not when its records changed, and the words
/// stay search terms. Relative times ("the last 50 years") are times.
fn names_a_year_before_the_tools(expression: &[String]) -> bool {
    expression.iter().any(|word| {
        word.len() == 4
            && word
                .parse::<u32>()
                .is_ok_and(|year| (1000..EARLIEST_RECORDS).contains(&year))
    })
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

#[cfg(test)]
mod tests;
