//! Text helpers: vendors return markup; the host wants plain text.

/// The longest prefix of `text` of at most `max` bytes, cut at a character
/// boundary.
pub fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

/// Joins non-empty parts with `sep`.
pub fn join_non_empty<'a>(parts: impl IntoIterator<Item = &'a str>, sep: &str) -> String {
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(sep)
}

/// Keyword query text: the terms and quoted phrases, joined with `sep`
/// (a space for AND-by-default engines, `" OR "` where supported).
pub fn keywords(terms: &[String], phrases: &[String], sep: &str) -> String {
    let mut parts: Vec<String> = phrases
        .iter()
        .map(|p| format!("\"{}\"", p.replace('"', "")))
        .collect();
    parts.extend(terms_outside_phrases(terms, phrases).cloned());
    parts.join(sep)
}

/// The terms no phrase contains, in order: what a query adds after its
/// quoted phrases, as a term inside a phrase would only repeat it.
pub fn terms_outside_phrases<'a>(
    terms: &'a [String],
    phrases: &'a [String],
) -> impl Iterator<Item = &'a String> {
    terms
        .iter()
        .filter(|t| !phrases.iter().any(|p| p.contains(t.as_str())))
}

/// Plain text of an HTML or XHTML fragment (Confluence's storage format,
/// e-mail bodies): tags dropped, block elements and `<br>` as line breaks,
/// `<script>`/`<style>` skipped, CDATA kept, entities decoded, runs of
/// blanks collapsed and blank lines dropped.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..lt]));
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<![CDATA[") {
            let end = after.find("]]>").unwrap_or(after.len());
            out.push_str(&after[..end]);
            rest = after.get(end + 3..).unwrap_or("");
            continue;
        }
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else {
            rest = "";
            break;
        };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == ':' || *c == '-')
            .collect::<String>()
            .to_ascii_lowercase();
        if !tag.starts_with('/') && matches!(name.as_str(), "script" | "style") {
            let close = format!("</{name}");
            let lower = rest.to_ascii_lowercase();
            rest = match lower.find(&close) {
                Some(i) => rest[i..].find('>').map_or("", |j| &rest[i + j + 1..]),
                None => "",
            };
            continue;
        }
        if matches!(
            name.as_str(),
            "br" | "p"
                | "div"
                | "li"
                | "tr"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "h5"
                | "h6"
                | "ul"
                | "ol"
                | "table"
                | "blockquote"
                | "pre"
                | "hr"
        ) {
            out.push('\n');
        } else if matches!(name.as_str(), "td" | "th") {
            out.push(' ');
        }
    }
    out.push_str(&decode_entities(rest));
    out.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Decodes the HTML entities vendors put in text (`&amp;`, `&#39;`,
/// `&#x2019;`, `&nbsp;`...). Unknown entities are kept as written.
pub fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let decoded = rest[1..]
            .char_indices()
            .take(10)
            .find(|(_, c)| *c == ';')
            .and_then(|(semi, _)| {
                let name = &rest[1..1 + semi];
                let c = match name {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    "nbsp" => ' ',
                    _ => {
                        let code = match name.strip_prefix('#') {
                            Some(hex) if hex.starts_with(['x', 'X']) => {
                                u32::from_str_radix(&hex[1..], 16).ok()?
                            }
                            Some(dec) => dec.parse().ok()?,
                            None => return None,
                        };
                        char::from_u32(code)?
                    }
                };
                Some((c, semi + 2))
            });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("abc", 10), "abc");
    }

    #[test]
    fn keywords_put_phrases_first() {
        let terms = vec![
            "checkout".to_string(),
            "timeout".to_string(),
            "eu".to_string(),
        ];
        let phrases = vec!["checkout timeout".to_string()];
        assert_eq!(
            keywords(&terms, &phrases, " OR "),
            "\"checkout timeout\" OR eu"
        );
    }

    #[test]
    fn html_becomes_text() {
        let html = "<h2>Summary</h2><p>Checkout <strong>502s</strong> &amp; timeouts.</p>\
                    <ul><li>one</li><li>two&#39;s</li></ul><script>x()</script>\
                    <ac:structured-macro><ac:plain-text-body><![CDATA[a < b]]></ac:plain-text-body></ac:structured-macro>";
        assert_eq!(
            html_to_text(html),
            "Summary\nCheckout 502s & timeouts.\none\ntwo's\na < b"
        );
        assert_eq!(
            decode_entities("a&nbsp;b &#x2019; &bogus; &amp;é &"),
            "a b \u{2019} &bogus; &é &"
        );
    }
}
