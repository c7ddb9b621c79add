// A Quarry connector in JavaScript: Notion pages, through `POST /v1/search`
// (a query route: Notion takes the question in a JSON body) and the first
// blocks of each page found.
//
// Built into a WebAssembly component by `jco componentize` against the same
// contract as the Rust connectors (wit/v1/connector.wit); see build.sh and
// docs/connectors.md. The host adds the user's token, enforces the routes of
// connector.toml, and ranks and cites what `search` returns.

import { fetch } from "quarry:connector/http@1.0.0";
import { log } from "quarry:connector/log@1.0.0";

const API = "https://api.notion.com/v1";
const NOTION_VERSION = "2025-09-03";
// Pages whose text is read: each costs one fetch (the manifest allows 8).
const MAX_BODIES = 6;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// A failed search is thrown as the contract's `search-error` variant.
class SearchError extends Error {
  constructor(tag, val) {
    super(`${tag}: ${val}`);
    this.payload = val === undefined ? { tag } : { tag, val };
  }
}

function notion(method, url, body) {
  const headers = [
    { name: "notion-version", value: NOTION_VERSION },
    { name: "accept", value: "application/json" },
  ];
  if (body !== undefined) {
    headers.push({ name: "content-type", value: "application/json" });
  }
  let response;
  try {
    response = fetch({
      method,
      url,
      headers,
      body: body === undefined ? undefined : encoder.encode(JSON.stringify(body)),
    });
  } catch (e) {
    // The host refused or could not send the request: `fetch-error`.
    const error = e.payload ?? { tag: "network", val: String(e) };
    if (error.tag === "timeout") throw new SearchError("upstream", "Notion timed out");
    if (error.tag === "network") throw new SearchError("upstream", error.val);
    throw new SearchError("denied", error.val ?? error.tag);
  }
  if (response.status === 401) throw new SearchError("unauthorized", "Notion refused the token");
  if (response.status === 429) throw new SearchError("rate-limited", retryAfter(response));
  if (response.status >= 500) throw new SearchError("upstream", `Notion answered HTTP ${response.status}`);
  if (response.status >= 400) throw new SearchError("invalid-request", `Notion answered HTTP ${response.status}`);
  try {
    return JSON.parse(decoder.decode(response.body));
  } catch {
    throw new SearchError("invalid-response", "Notion's answer is not JSON");
  }
}

function retryAfter(response) {
  const header = response.headers.find((h) => h.name.toLowerCase() === "retry-after");
  const seconds = header ? parseInt(header.value, 10) : NaN;
  return Number.isFinite(seconds) ? seconds : undefined;
}

function plainText(richText) {
  return (richText ?? []).map((part) => part.plain_text ?? "").join("");
}

function title(page) {
  const property = Object.values(page.properties ?? {}).find((p) => p.type === "title");
  return property ? plainText(property.title) : "";
}

function pageText(id) {
  const body = notion("get", `${API}/blocks/${encodeURIComponent(id)}/children?page_size=100`);
  return (body.results ?? [])
    .map((block) => plainText(block[block.type]?.rich_text))
    .filter((line) => line !== "")
    .join("\n");
}

function inRange(request, at) {
  if (!at) return true;
  const t = Date.parse(at);
  if (request.since && t < Date.parse(request.since)) return false;
  if (request.until && t > Date.parse(request.until)) return false;
  return true;
}

export const search = {
  search(request) {
    const words = [...request.terms, ...request.phrases.map((p) => `"${p}"`)];
    const query = words.length > 0 ? words.join(" ") : request.query;
    const want = Math.max(1, Math.min(request.maxResults, MAX_BODIES));
    const found = notion("post", `${API}/search`, {
      query,
      filter: { property: "object", value: "page" },
      sort: { timestamp: "last_edited_time", direction: "descending" },
      page_size: want,
    });
    const pages = (found.results ?? []).filter((p) => p.id && p.url && inRange(request, p.last_edited_time));
    log("debug", `${pages.length} pages found`);
    return pages.slice(0, want).map((page) => ({
      id: page.id,
      title: title(page),
      content: pageText(page.id),
      url: page.url,
      author: page.created_by?.id,
      createdAt: page.created_time,
      updatedAt: page.last_edited_time,
      metadata: JSON.stringify({ parent: page.parent?.type ?? null }),
    }));
  },
};
