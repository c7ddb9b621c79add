//! Time expressions against a fixed clock (a Sunday afternoon).

use super::*;
use crate::calendar::rfc3339;
use crate::words::words;

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
    // A date without a preposition names the matter: its records come on
    // that day and after.
    assert_eq!(bounds("March 2025"), from("2025-03-01T00:00:00Z"));
    assert_eq!(bounds("2025-03-04"), from("2025-03-04T00:00:00Z"));
    assert_eq!(
        bounds("Incident 2025-02-03: checkout 502s"),
        from("2025-02-03T00:00:00Z")
    );
    assert_eq!(bounds("4 March 2025 outage"), from("2025-03-04T00:00:00Z"));
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
