"""A Quarry connector in Python: Slack messages through `search.messages`.

Built into a WebAssembly component by componentize-py against the same
contract as the Rust connectors (`wit/v1/connector.wit`); see build.sh and
docs/connectors.md. The host adds the user's token, enforces the routes of
connector.toml, and ranks and cites what `search` returns.
"""

import json
from datetime import datetime, timedelta, timezone
from urllib.parse import urlencode

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.search import (
    Document,
    SearchError_InvalidResponse,
    SearchError_RateLimited,
    SearchError_Unauthorized,
    SearchError_Upstream,
    SearchError_Denied,
    SearchRequest,
)
from wit_world.imports import http, log

API = "https://slack.com/api/search.messages"
UNAUTHORIZED = {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive", "missing_scope"}


class Search(exports.Search):
    def search(self, request: SearchRequest) -> list[Document]:
        count = max(1, min(request.max_results, 100))
        url = API + "?" + urlencode(
            {"query": slack_query(request), "count": count, "sort": "score", "highlight": "false"}
        )
        try:
            response = http.fetch(http.Request(http.Method.GET, url, [], None))
        except Err as e:
            # The host refused or could not send the request.
            raise Err(SearchError_Denied(fetch_error_text(e.value)))
        if response.status == 429:
            raise Err(SearchError_RateLimited(retry_after(response)))
        if response.status >= 500:
            raise Err(SearchError_Upstream(f"Slack answered HTTP {response.status}"))
        try:
            body = json.loads(response.body)
        except ValueError:
            raise Err(SearchError_InvalidResponse("Slack's answer is not JSON"))
        if not body.get("ok"):
            error = str(body.get("error", "unknown_error"))
            if error in UNAUTHORIZED:
                raise Err(SearchError_Unauthorized(error))
            if error == "ratelimited":
                raise Err(SearchError_RateLimited(retry_after(response)))
            raise Err(SearchError_Upstream(f"Slack error: {error}"))
        matches = body.get("messages", {}).get("matches", [])
        log.log(log.Level.DEBUG, f"{len(matches)} matches")
        return [doc for doc in map(to_document, matches) if doc is not None]


def slack_query(request: SearchRequest) -> str:
    """Terms (AND) and quoted phrases, then Slack's exclusive date modifiers."""
    words = list(request.terms) + [f'"{p}"' for p in request.phrases]
    query = " ".join(words) or request.query
    if request.since:
        query += " after:" + shift_day(request.since, -1)
    if request.until:
        query += " before:" + shift_day(request.until, 1)
    return query


def shift_day(rfc3339: str, days: int) -> str:
    day = datetime.strptime(rfc3339[:10], "%Y-%m-%d") + timedelta(days=days)
    return day.strftime("%Y-%m-%d")


def to_document(m: dict) -> Document | None:
    permalink, ts = m.get("permalink"), m.get("ts")
    if not permalink or not ts:
        return None
    channel = m.get("channel") or {}
    when = datetime.fromtimestamp(float(ts), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Document(
        id=f"{channel.get('id', '')}:{ts}",
        title=f"#{channel['name']}" if channel.get("name") else "",
        content=m.get("text", ""),
        url=permalink,
        author=m.get("username") or m.get("user"),
        created_at=when,
        updated_at=when,
        metadata=json.dumps({"channel": channel.get("name"), "ts": ts}),
    )


def retry_after(response: http.Response) -> int | None:
    for header in response.headers:
        if header.name.lower() == "retry-after" and header.value.isdigit():
            return int(header.value)
    return None


def fetch_error_text(error: http.FetchError) -> str:
    return getattr(error, "value", None) or type(error).__name__
