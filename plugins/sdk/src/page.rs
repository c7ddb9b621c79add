//! Pagination: keep asking for the next page until there are enough
//! results, the upstream has no more, or the page budget is spent.

use crate::SearchError;

/// One page of results and the cursor of the next one, if any.
pub struct Page<T, C> {
    pub items: Vec<T>,
    pub next: Option<C>,
}

/// Fetches pages from `fetch(cursor)` (the first call gets `None`) until
/// `want` items are collected, no next cursor is returned, or `max_pages`
/// pages were read. Each page is one fetch, and the host caps fetches.
pub fn collect_pages<T, C>(
    want: usize,
    max_pages: usize,
    mut fetch: impl FnMut(Option<C>) -> Result<Page<T, C>, SearchError>,
) -> Result<Vec<T>, SearchError> {
    let mut items = Vec::new();
    let mut cursor = None;
    for _ in 0..max_pages {
        let page = fetch(cursor.take())?;
        let empty = page.items.is_empty();
        items.extend(page.items);
        match page.next {
            Some(next) if items.len() < want && !empty => cursor = Some(next),
            _ => break,
        }
    }
    items.truncate(want);
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_want_at_the_end_and_at_the_budget() {
        let pages = |n: u32| {
            move |c: Option<u32>| -> Result<Page<u32, u32>, SearchError> {
                let i = c.unwrap_or(0);
                Ok(Page {
                    items: vec![i * 10, i * 10 + 1],
                    next: (i + 1 < n).then_some(i + 1),
                })
            }
        };
        assert_eq!(collect_pages(3, 10, pages(5)).unwrap(), vec![0, 1, 10]);
        assert_eq!(
            collect_pages(100, 10, pages(2)).unwrap(),
            vec![0, 1, 10, 11]
        );
        assert_eq!(collect_pages(100, 1, pages(5)).unwrap(), vec![0, 1]);
    }
}
