//! The API's request bodies: `POST /v1/query`, `POST /v1/deep_search`,
//! `POST /v1/webhooks` and its test endpoint. Plain serde types, parsed by
//! [`crate::json::parse`]; the host's handlers check their values (lengths,
//! ranges, connector ids, dates, the webhook's target).

use serde::Deserialize;

use crate::json::{Body, present};

/// `POST /v1/query`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryBody {
    pub query: String,
    #[serde(default, deserialize_with = "present")]
    pub keywords: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    pub connectors: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    pub max_results: Option<i64>,
}

impl Body for QueryBody {
    fn expectation(field: &str) -> Option<&'static str> {
        match field {
            "query" => Some("query must be a string of 1 to 2000 characters"),
            "keywords" => {
                Some("keywords must be an array of 1 to 10 strings of 1 to 100 characters")
            }
            "connectors" => Some("connectors must be an array of 1 to 50 connector ids (strings)"),
            "max_results" => Some("max_results must be an integer between 1 and 100"),
            _ => None,
        }
    }
}

/// `POST /v1/deep_search`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeepSearchBody {
    pub query: String,
    #[serde(default, deserialize_with = "present")]
    pub max_results: Option<i64>,
    #[serde(default, deserialize_with = "present")]
    pub date_from: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub date_to: Option<String>,
}

impl Body for DeepSearchBody {
    fn expectation(field: &str) -> Option<&'static str> {
        match field {
            "query" => Some("query must be a string of 1 to 2000 characters"),
            "max_results" => Some("max_results must be an integer between 1 and 50"),
            "date_from" => {
                Some("date_from must be an ISO 8601 date-time string, such as 2026-11-01T00:00:00Z")
            }
            "date_to" => {
                Some("date_to must be an ISO 8601 date-time string, such as 2026-11-30T23:59:59Z")
            }
            _ => None,
        }
    }
}

/// `POST /v1/webhooks`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterBody {
    pub url: String,
    #[serde(default, deserialize_with = "present")]
    pub events: Option<Vec<String>>,
}

impl Body for RegisterBody {
    fn expectation(field: &str) -> Option<&'static str> {
        match field {
            "url" => Some("url must be a string: the https URL that receives the events"),
            "events" => Some("events must be an array of event names, such as [\"user.deleted\"]"),
            _ => None,
        }
    }
}

/// The test endpoint takes no parameters: an empty body or `{}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestBody {}

impl Body for TestBody {
    fn expectation(_field: &str) -> Option<&'static str> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn refused<T: Body>(body: &[u8]) -> String {
        match parse::<T>(body) {
            Ok(_) => panic!("{:?} is accepted", String::from_utf8_lossy(body)),
            Err(error) => error,
        }
    }

    #[test]
    fn bodies_parse_with_errors_that_name_the_field() {
        let body: QueryBody =
            parse(br#"{"query":"refunds","connectors":["github"],"max_results":5}"#).unwrap();
        assert_eq!(body.query, "refunds");
        assert_eq!(
            body.connectors.as_deref(),
            Some(&["github".to_string()][..])
        );
        let error = refused::<QueryBody>(br#"{"query":"a","max_results":"ten"}"#);
        assert!(error.starts_with("invalid `max_results`"), "{error}");
        let error = refused::<DeepSearchBody>(br#"{"query":"a","date_to":null}"#);
        assert!(error.contains("date_to"), "{error}");
        let error = refused::<RegisterBody>(br#"{"url":"https://a.example","url":"x"}"#);
        assert!(error.contains("duplicate field `url`"), "{error}");
        let error = refused::<RegisterBody>(br#"{"url":"https://a.example","secret":"x"}"#);
        assert!(error.contains("unknown field `secret`"), "{error}");
    }

    #[test]
    fn only_one_json_object_is_a_body() {
        for bad in [
            &b""[..],
            b"  ",
            b"[]",
            b"\"x\"",
            b"{} {}",
            b"{\"query\":\"a\"} x",
        ] {
            assert!(
                parse::<QueryBody>(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        parse::<TestBody>(b" {} ").unwrap();
    }
}
