//! The activity chart: one tool's last 24 hours in hourly buckets, each
//! bar the median latency of the tool's answers in that hour, and a mark
//! above each hour in which it failed.
//!
//! Server-rendered SVG, inline in the page: no script and no image to
//! fetch, so the dashboard's CSP stays as strict as it is. Colours come
//! from the stylesheet (classes, no `style` attribute). The SVG is one
//! image to a screen reader (`role="img"`), named by its `title` and told
//! by its `desc`; each bar's and mark's own `title` is a mouse's tooltip.
//! The activity page adds a table of the same figures.

use maud::{Markup, html};

/// Hourly buckets in a chart: the current hour and the 23 before it.
pub const HOURS: usize = 24;

const HOUR_SECONDS: i64 = 3600;

// The geometry, in the SVG's own units (it scales to the page's width).
const WIDTH: u32 = 320;
const HEIGHT: u32 = 100;
/// Left of the first hour: room for the latency scale's labels.
const PLOT_LEFT: u32 = 44;
/// Each hour's width, and its bar's (the rest is space between bars).
const SLOT: u32 = 11;
const BAR: u32 = 7;
/// The row of failure marks, above the bars.
const MARK_Y: u32 = 8;
const PLOT_TOP: u32 = 16;
const PLOT_BOTTOM: u32 = 78;
const LABEL_Y: u32 = 94;

/// One tool's part in one question, as the chart counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// When the question was asked (ms since the epoch).
    pub at_ms: i64,
    /// How long the tool took; unknown for questions recorded before
    /// latencies were kept (they count as answers, without a bar).
    pub latency_ms: Option<u64>,
    pub failed: bool,
}

/// One hour of one tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hour {
    /// Its first second (since the epoch, UTC).
    pub start: i64,
    /// The latencies of the answers that did not fail (a timeout's or an
    /// error's time says nothing of how fast the tool answers).
    pub latencies_ms: Vec<u64>,
    /// Questions that asked the tool in this hour, and how many failed.
    pub calls: u32,
    pub failures: u32,
}

impl Hour {
    /// The median of the hour's latencies (the lower of the middle two).
    pub fn median_ms(&self) -> Option<u64> {
        median(&self.latencies_ms)
    }
}

/// The lower median of `values`, if any.
pub fn median(values: &[u64]) -> Option<u64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len().saturating_sub(1) / 2).copied()
}

/// The [`HOURS`] hours that end with the one holding `now` (seconds),
/// oldest first, with the samples that fall in them; samples outside are
/// left out.
pub fn hourly(samples: &[Sample], now: i64) -> Vec<Hour> {
    let first = now.div_euclid(HOUR_SECONDS) * HOUR_SECONDS - (HOURS as i64 - 1) * HOUR_SECONDS;
    let mut hours: Vec<Hour> = (0..HOURS as i64)
        .map(|i| Hour {
            start: first + i * HOUR_SECONDS,
            ..Hour::default()
        })
        .collect();
    for sample in samples {
        let offset = sample.at_ms.div_euclid(1000) - first;
        let Some(hour) = usize::try_from(offset.div_euclid(HOUR_SECONDS))
            .ok()
            .filter(|_| offset >= 0)
            .and_then(|i| hours.get_mut(i))
        else {
            continue;
        };
        hour.calls += 1;
        if sample.failed {
            hour.failures += 1;
        } else if let Some(latency) = sample.latency_ms {
            hour.latencies_ms.push(latency);
        }
    }
    hours
}

/// `HH:00`, the start of an hour in UTC.
pub fn hour_label(start: i64) -> String {
    format!("{:02}:00", start.rem_euclid(86_400) / HOUR_SECONDS)
}

/// The chart of one tool's `hours` (from [`hourly`]). `id` prefixes the
/// ids of its title and description: unique on the page.
pub fn render(id: &str, label: &str, hours: &[Hour]) -> Markup {
    let title_id = format!("{id}-title");
    let desc_id = format!("{id}-desc");
    let scale = hours.iter().filter_map(Hour::median_ms).max().unwrap_or(0);
    html! {
        svg class="chart" viewBox={ "0 0 " (WIDTH) " " (HEIGHT) } role="img"
            aria-labelledby={ (title_id) " " (desc_id) } {
            title id=(title_id) { (label) ": latency and failures over the last 24 hours" }
            desc id=(desc_id) { (describe(hours)) }
            // Braces on every SVG element: HTML's parser needs the end tag.
            line class="axis" x1=(PLOT_LEFT) y1=(PLOT_BOTTOM)
                x2=(PLOT_LEFT + SLOT * HOURS as u32) y2=(PLOT_BOTTOM) {}
            @if scale > 0 {
                text class="tick" x=(PLOT_LEFT - 4) y=(PLOT_TOP + 4) text-anchor="end" {
                    (scale) " ms"
                }
            }
            text class="tick" x=(PLOT_LEFT - 4) y=(PLOT_BOTTOM) text-anchor="end" { "0" }
            @for (slot, hour) in hours.iter().enumerate() {
                (bar(slot as u32, hour, scale))
                (failure_mark(slot as u32, hour))
            }
            @for slot in [0, HOURS / 2, HOURS - 1] {
                @if let Some(hour) = hours.get(slot) {
                    text class="tick" x=(slot_center(slot as u32)) y=(LABEL_Y)
                        text-anchor="middle" { (hour_label(hour.start)) }
                }
            }
        }
    }
}

fn slot_center(slot: u32) -> u32 {
    PLOT_LEFT + slot * SLOT + SLOT / 2
}

/// The hour's bar: its median latency, on a scale whose top is `scale`.
fn bar(slot: u32, hour: &Hour, scale: u64) -> Markup {
    let Some(median) = hour.median_ms() else {
        return html! {};
    };
    let room = u64::from(PLOT_BOTTOM - PLOT_TOP);
    // At least one unit tall, so that a fast hour still shows.
    let height = (median * room).div_ceil(scale.max(1)).clamp(1, room) as u32;
    html! {
        rect class="bar" x=(PLOT_LEFT + slot * SLOT + (SLOT - BAR) / 2) y=(PLOT_BOTTOM - height)
            width=(BAR) height=(height) {
            title { (hour_text(hour)) }
        }
    }
}

fn failure_mark(slot: u32, hour: &Hour) -> Markup {
    html! {
        @if hour.failures > 0 {
            circle class="failure" cx=(slot_center(slot)) cy=(MARK_Y) r="3.5" {
                title { (hour_text(hour)) }
            }
        }
    }
}

/// What one hour holds, in words.
fn hour_text(hour: &Hour) -> String {
    let mut text = format!(
        "{}–{} UTC: {}",
        hour_label(hour.start),
        hour_label(hour.start + HOUR_SECONDS),
        count(hour.calls, "question", "questions"),
    );
    if let Some(median) = hour.median_ms() {
        text.push_str(&format!(", median latency {median} ms"));
    }
    if hour.failures > 0 {
        text.push_str(&format!(", {} failed", hour.failures));
    }
    text
}

/// The whole chart in words: its `desc`.
pub fn describe(hours: &[Hour]) -> String {
    let calls: u32 = hours.iter().map(|h| h.calls).sum();
    if calls == 0 {
        return "Not asked in the last 24 hours.".to_string();
    }
    let latencies: Vec<u64> = hours
        .iter()
        .flat_map(|h| h.latencies_ms.iter().copied())
        .collect();
    let mut text = format!(
        "{} in the last 24 hours",
        count(calls, "question", "questions")
    );
    if let Some(median) = median(&latencies) {
        let slowest = hours.iter().max_by_key(|h| h.median_ms()).expect("hours");
        text.push_str(&format!(
            "; median latency {median} ms, slowest hour {}–{} UTC at {} ms",
            hour_label(slowest.start),
            hour_label(slowest.start + HOUR_SECONDS),
            slowest.median_ms().unwrap_or(0),
        ));
    }
    let failed: Vec<String> = hours
        .iter()
        .filter(|h| h.failures > 0)
        .map(|h| format!("{} at {}", h.failures, hour_label(h.start)))
        .collect();
    match failed.is_empty() {
        true => text.push_str("; no failures."),
        false => text.push_str(&format!("; failures: {} UTC.", failed.join(", "))),
    }
    text
}

/// `n` and the noun that goes with it.
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    match n.into() {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-27 10:30:00 UTC.
    const NOW: i64 = 1_795_775_400;

    fn at(seconds_ago: i64, latency_ms: Option<u64>, failed: bool) -> Sample {
        Sample {
            at_ms: (NOW - seconds_ago) * 1000,
            latency_ms,
            failed,
        }
    }

    #[test]
    fn samples_fall_in_their_hour_of_the_last_day() {
        let samples = [
            at(0, Some(100), false),
            at(60, Some(300), false),
            at(120, Some(200), false),
            at(29 * 60, Some(5000), true),
            // 10:00 is the current hour's start; 09:59 is the hour before.
            at(31 * 60, Some(40), false),
            at(23 * 3600, Some(7), false),
            // Before the first hour (09:00 yesterday), and in the future.
            at(23 * 3600 + 31 * 60, Some(9), false),
            at(-3600, Some(9), false),
        ];
        let hours = hourly(&samples, NOW);
        assert_eq!(hours.len(), HOURS);
        assert_eq!(hour_label(hours[0].start), "11:00");
        assert_eq!(hour_label(hours[23].start), "10:00");
        assert_eq!(hours[23].start, NOW - 30 * 60);
        let current = &hours[23];
        assert_eq!((current.calls, current.failures), (4, 1));
        assert_eq!(
            current.latencies_ms,
            [100, 300, 200],
            "failures add no latency"
        );
        assert_eq!(current.median_ms(), Some(200));
        assert_eq!(hours[22].latencies_ms, [40]);
        assert_eq!(hours[0].latencies_ms, [7]);
        let counted: u32 = hours.iter().map(|h| h.calls).sum();
        assert_eq!(counted, 6, "the two outside the day are left out");
    }

    #[test]
    fn the_median_is_the_lower_middle() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[5]), Some(5));
        assert_eq!(median(&[9, 1, 5, 7]), Some(5));
        assert_eq!(median(&[3, 1, 2]), Some(2));
    }

    #[test]
    fn bars_scale_to_the_slowest_hour_and_failures_are_marked() {
        let samples = [
            at(0, Some(400), false),
            at(3600, Some(100), false),
            at(2 * 3600, None, true),
            // Recorded before latencies were kept: counted, no bar.
            at(3 * 3600, None, false),
        ];
        let svg = render("chart-0", "Linear", &hourly(&samples, NOW)).into_string();
        assert_eq!(svg.matches("<rect").count(), 2, "{svg}");
        assert_eq!(svg.matches("<circle").count(), 1, "{svg}");
        let room = PLOT_BOTTOM - PLOT_TOP;
        assert!(svg.contains(&format!(r#"height="{room}""#)), "{svg}");
        // 100 ms of 400: a quarter of the room, rounded up.
        assert!(svg.contains(r#"height="16""#), "{svg}");
        assert!(svg.contains(">400 ms</text>"), "{svg}");
        assert!(
            svg.contains("08:00–09:00 UTC: 1 question, 1 failed"),
            "{svg}"
        );
        assert!(svg.contains(r#"aria-labelledby="chart-0-title chart-0-desc""#));
        assert!(svg.contains(
            "<desc id=\"chart-0-desc\">4 questions in the last 24 hours; median latency \
             100 ms, slowest hour 10:00–11:00 UTC at 400 ms; failures: 1 at 08:00 UTC.</desc>"
        ));
        // Every SVG element is closed: HTML's parser does not close them.
        assert!(!svg.contains("/>"));
        assert_eq!(svg.matches("<line").count(), svg.matches("</line>").count());
    }

    #[test]
    fn an_idle_day_has_no_bars_and_says_so() {
        let svg = render("c", "Slack", &hourly(&[], NOW)).into_string();
        assert!(!svg.contains("<rect") && !svg.contains("<circle"));
        assert!(svg.contains(">Not asked in the last 24 hours.</desc>"));
    }

    #[test]
    fn labels_are_escaped() {
        let svg = render("c", "<script>alert(1)</script> & co", &hourly(&[], NOW)).into_string();
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; co: latency"));
    }
}
