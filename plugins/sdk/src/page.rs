//! Pagination: keep asking for the next page until there are enough
//! results, the upstream has no more, or the page budget is spent.

use crate::SearchError;
use crate::http::{Request, Response, send_all};

/// One page of results and the cursor of the next one, if any.
pub struct Page<T, C> {
    pub items: Vec<T>,
    pub next: Option<C>,
}

impl<T, C> Page<T, C> {
    /// A page whose `cursor` is followed only if `more` says there is a next
    /// page: for vendors that flag the last page (`has_more`, `hasNextPage`,
    /// `isLast`) beside a cursor field, which may still be set on it.
    pub fn next_if(items: Vec<T>, more: bool, cursor: Option<C>) -> Page<T, C> {
        Page {
            items,
            next: cursor.filter(|_| more),
        }
    }
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

/// [`collect_pages`] for several lists at once (one per kind of record,
/// say) whose pages do not depend on each other: each round asks for the
/// next page of every list still going in one batch ([`send_all`]), so `k`
/// lists of `p` pages cost `p` round trips instead of `k × p`.
///
/// `request(list, cursor)` builds a page's request (`None`: the first
/// page) and `read(list, cursor, response)` reads its answer. Each list
/// stops where [`collect_pages`] would stop it, and is cut to `want`.
///
/// The error returned is the one reading the lists one after the other
/// would have met first: a failure ends its list and the lists after it,
/// while the lists before it go on (a failure of theirs comes first).
pub fn collect_pages_each<T, C>(
    lists: usize,
    want: usize,
    max_pages: usize,
    request: impl FnMut(usize, Option<&C>) -> Request,
    read: impl FnMut(usize, Option<&C>, Response) -> Result<Page<T, C>, SearchError>,
) -> Result<Vec<Vec<T>>, SearchError> {
    pages_each(lists, want, max_pages, request, send_all, read)
}

/// One list of [`collect_pages_each`]: what it has, and where it goes on.
struct Paging<T, C> {
    items: Vec<T>,
    cursor: Option<C>,
    pages: usize,
    done: bool,
}

impl<T, C> Paging<T, C> {
    /// Takes a page and decides, as [`collect_pages`] does, whether to go on.
    fn take(&mut self, page: Page<T, C>, want: usize, max_pages: usize) {
        self.pages += 1;
        let empty = page.items.is_empty();
        self.items.extend(page.items);
        match page.next {
            Some(next) if self.items.len() < want && !empty && self.pages < max_pages => {
                self.cursor = Some(next)
            }
            _ => self.done = true,
        }
    }
}

/// [`collect_pages_each`] with the sending passed in (`send` answers one
/// result per request, in order), so that it runs without a host in tests.
fn pages_each<Q, A, T, C>(
    lists: usize,
    want: usize,
    max_pages: usize,
    mut request: impl FnMut(usize, Option<&C>) -> Q,
    mut send: impl FnMut(Vec<Q>) -> Vec<Result<A, SearchError>>,
    mut read: impl FnMut(usize, Option<&C>, A) -> Result<Page<T, C>, SearchError>,
) -> Result<Vec<Vec<T>>, SearchError> {
    let mut paging: Vec<Paging<T, C>> = (0..lists)
        .map(|_| Paging {
            items: Vec::new(),
            cursor: None,
            pages: 0,
            done: max_pages == 0,
        })
        .collect();
    let mut failure = None;
    loop {
        let going: Vec<usize> = (0..lists).filter(|&i| !paging[i].done).collect();
        if going.is_empty() {
            break;
        }
        let requests = going
            .iter()
            .map(|&i| request(i, paging[i].cursor.as_ref()))
            .collect();
        for (i, answer) in going.into_iter().zip(send(requests)) {
            // Ended by the failure of an earlier list in this round.
            if paging[i].done {
                continue;
            }
            let list = &mut paging[i];
            match answer.and_then(|a| read(i, list.cursor.as_ref(), a)) {
                Ok(page) => list.take(page, want, max_pages),
                Err(error) => {
                    failure = Some(error);
                    paging[i..].iter_mut().for_each(|l| l.done = true);
                }
            }
        }
    }
    if let Some(error) = failure {
        return Err(error);
    }
    Ok(paging
        .into_iter()
        .map(|mut l| {
            l.items.truncate(want);
            l.items
        })
        .collect())
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

    #[test]
    fn follows_a_flagged_cursor_only_when_there_is_more() {
        let page = Page::next_if(vec![1], true, Some("c"));
        assert_eq!((page.items, page.next), (vec![1], Some("c")));
        assert_eq!(Page::next_if(vec![1], false, Some("c")).next, None);
        assert_eq!(Page::<u8, &str>::next_if(vec![], true, None).next, None);
    }

    /// The (list, cursor) pairs asked in one round.
    type Rounds = Vec<(usize, u32)>;

    /// Lists of `sizes[i]` items, two a page, the cursor being the offset;
    /// `fail` makes the page at that (list, offset) fail. Records each
    /// round's requests.
    fn run(
        sizes: &[u32],
        want: usize,
        max_pages: usize,
        fail: &[(usize, u32)],
    ) -> (Result<Vec<Vec<u32>>, SearchError>, Vec<Rounds>) {
        let mut rounds = Vec::new();
        let result = pages_each(
            sizes.len(),
            want,
            max_pages,
            |i, c: Option<&u32>| (i, c.copied().unwrap_or(0)),
            |requests: Vec<(usize, u32)>| {
                rounds.push(requests.clone());
                requests
                    .into_iter()
                    .map(|(i, at)| {
                        if fail.contains(&(i, at)) {
                            Err(SearchError::Upstream(format!("list {i} at {at}")))
                        } else {
                            Ok((i, at))
                        }
                    })
                    .collect()
            },
            |i, c, (j, at)| {
                assert_eq!((i, c.copied().unwrap_or(0)), (j, at));
                let end = (at + 2).min(sizes[i]);
                Ok(Page {
                    items: (at..end).map(|n| i as u32 * 100 + n).collect(),
                    next: (end < sizes[i]).then_some(end),
                })
            },
        );
        (result, rounds)
    }

    #[test]
    fn pages_each_list_as_collect_pages_would_one_round_at_a_time() {
        let (result, rounds) = run(&[5, 1, 9], 4, 3, &[]);
        assert_eq!(
            result.unwrap(),
            vec![vec![0, 1, 2, 3], vec![100], vec![200, 201, 202, 203]]
        );
        assert_eq!(
            rounds,
            vec![vec![(0, 0), (1, 0), (2, 0)], vec![(0, 2), (2, 2)]]
        );
        let (result, rounds) = run(&[9, 9], 100, 2, &[]);
        assert_eq!(result.unwrap()[1], vec![100, 101, 102, 103]);
        assert_eq!(rounds.len(), 2, "the page budget holds per list");
        assert!(run(&[9], 100, 0, &[]).1.is_empty());
    }

    #[test]
    fn fails_with_what_reading_one_list_after_another_meets_first() {
        // The second list fails first, but the first list goes on and
        // fails later: its failure is the one reading in order meets.
        let (result, rounds) = run(&[9, 9, 9], 100, 3, &[(1, 0), (0, 2)]);
        assert!(matches!(result, Err(SearchError::Upstream(m)) if m == "list 0 at 2"));
        assert_eq!(rounds, vec![vec![(0, 0), (1, 0), (2, 0)], vec![(0, 2)]]);
        // Only a later list fails: the earlier ones finish, then its error.
        let (result, rounds) = run(&[3, 9], 100, 3, &[(1, 2)]);
        assert!(matches!(result, Err(SearchError::Upstream(m)) if m == "list 1 at 2"));
        assert_eq!(rounds.len(), 2);
    }
}
