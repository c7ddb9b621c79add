// An MCP client that signs in with OAuth on the official TypeScript SDK's
// own machinery (an OAuthClientProvider kept in memory, given to the
// StreamableHTTPClientTransport, which runs the SDK's auth() on a 401),
// for tests/mcp_ts.rs:
//
//     NODE_EXTRA_CA_CERTS=CA.pem node oauth.mjs --url URL --email E --password P
//
// The demo must issue short-lived access tokens (`quarry demo
// --token-ttl-seconds 4`). In turn:
//  1. sign-in: the SDK connects without a token, finds the authorization
//     server from the 401 (RFC 9728, RFC 8414), registers (RFC 7591) and
//     sends the person to the authorization URL; the person (played here
//     over HTTP, as a browser would: the dashboard's sign-in with the
//     user's email and password, then "Allow" on the consent form with its
//     CSRF token) is sent back with a code, which the SDK exchanges (PKCE);
//     then tools/list and a search.
//  2. two tool calls in flight when the access token has expired: both are
//     refused (401) and both make the SDK refresh, with the same refresh
//     token (the token requests are held until both have been sent, as two
//     calls of one client, or two processes sharing its tokens, do). The
//     person must not be signed out: both calls, and a later one, work.
//  3. registration with `token_endpoint_auth_method: "client_secret_post"`
//     (what some clients ask for): registered as a public client (`none`),
//     and the SDK signs in with it as in 1.
// Prints one JSON summary line; exits 1 when it lists problems.

import { randomBytes } from "node:crypto";

import { described, options, say, sdk, version } from "./common.mjs";

const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { UnauthorizedError } = await sdk("client/auth.js");

const args = options(["url", "email", "password"]);
const REDIRECT = args["redirect-uri"] ?? "http://127.0.0.1:33418/callback";
const ORIGIN = new URL(args.url).origin;
const problems = [];
const summary = { sdk: version("@modelcontextprotocol/sdk") };

/** Everything the SDK sends, in order (path, method, status). */
const sent = [];
/** The refresh requests at the token endpoint, held until both are in flight. */
const refreshes = [];
let barrier = null;

/** From now on, refresh requests wait until `count` of them have been sent (5 s at most). */
function holdRefreshes(count) {
    let release;
    const promise = new Promise((resolve) => (release = resolve));
    barrier = { count, arrived: 0, promise, release };
}

async function sdkFetch(url, init = {}) {
    const target = new URL(String(url instanceof Request ? url.url : url));
    const form = init.body instanceof URLSearchParams ? init.body : null;
    if (form?.get("grant_type") === "refresh_token" && barrier) {
        const entry = { refresh_token: form.get("refresh_token") };
        refreshes.push(entry);
        barrier.arrived += 1;
        if (barrier.arrived >= barrier.count) barrier.release("both in flight");
        entry.barrier = await Promise.race([
            barrier.promise,
            new Promise((resolve) => setTimeout(() => resolve("timed out waiting for the other"), 5000)),
        ]);
        const response = await fetch(url, init);
        entry.status = response.status;
        if (!response.ok) entry.error = (await response.clone().json().catch(() => null))?.error ?? null;
        sent.push({ path: target.pathname, http: "POST", grant: "refresh_token", status: response.status });
        return response;
    }
    const response = await fetch(url, init);
    sent.push({
        path: target.pathname,
        http: init.method ?? "GET",
        grant: form?.get("grant_type") ?? undefined,
        status: response.status,
    });
    return response;
}

/** An OAuthClientProvider that keeps everything in memory. */
class Memory {
    constructor(metadata) {
        this.metadata = metadata;
        this.client = undefined;
        this.saved = undefined;
        this.history = [];
        this.verifier = undefined;
        this.authorizationUrl = undefined;
        this.sentState = undefined;
        this.invalidated = [];
    }
    get redirectUrl() {
        return REDIRECT;
    }
    get clientMetadata() {
        return this.metadata;
    }
    state() {
        this.sentState = randomBytes(16).toString("hex");
        return this.sentState;
    }
    clientInformation() {
        return this.client;
    }
    saveClientInformation(information) {
        this.client = information;
    }
    tokens() {
        return this.saved;
    }
    saveTokens(tokens) {
        this.saved = tokens;
        this.history.push(tokens);
    }
    redirectToAuthorization(url) {
        this.authorizationUrl = new URL(url);
    }
    saveCodeVerifier(verifier) {
        this.verifier = verifier;
    }
    codeVerifier() {
        return this.verifier;
    }
    invalidateCredentials(scope) {
        this.invalidated.push(scope);
        if (scope === "all" || scope === "client") this.client = undefined;
        if (scope === "all" || scope === "tokens") this.saved = undefined;
        if (scope === "all" || scope === "verifier") this.verifier = undefined;
    }
}

/** A person's browser at the dashboard: cookies kept, no redirect followed. */
class Person {
    constructor() {
        this.cookies = new Map();
    }
    async request(path, init = {}) {
        const headers = new Headers(init.headers);
        if (this.cookies.size) headers.set("cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
        const response = await fetch(new URL(path, ORIGIN), { ...init, headers, redirect: "manual" });
        for (const cookie of response.headers.getSetCookie()) {
            const [pair] = cookie.split(";");
            const at = pair.indexOf("=");
            const [name, value] = [pair.slice(0, at), pair.slice(at + 1)];
            if (value) this.cookies.set(name, value);
            else this.cookies.delete(name);
        }
        return { status: response.status, location: response.headers.get("location"), text: await response.text() };
    }
    post(path, fields) {
        return this.request(path, {
            method: "POST",
            headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams(fields).toString(),
        });
    }
    /** Signs in when asked to, allows the request; where the browser is sent back. */
    async allow(authorizationUrl) {
        let page = await this.request(authorizationUrl);
        if (page.status === 303 && page.location === "/dashboard/login") {
            const signedIn = await this.post("/dashboard/login", { email: args.email, password: args.password });
            if (signedIn.status !== 303 || !signedIn.location?.startsWith("/oauth/authorize?")) {
                throw new Error(`sign-in: ${signedIn.status} ${signedIn.location} ${signedIn.text.slice(0, 300)}`);
            }
            page = await this.request(signedIn.location);
        }
        if (page.status !== 200) throw new Error(`the consent page: ${page.status} ${page.text.slice(0, 500)}`);
        // The form's hidden fields: the request, carried, and the CSRF token.
        const fields = [...page.text.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)"/g)].map(
            ([, name, value]) => [name, unescape(value)],
        );
        if (!fields.some(([name]) => name === "csrf")) throw new Error("the consent form has no CSRF token");
        const answered = await this.post("/oauth/authorize", [...fields, ["decision", "allow"]]);
        if (answered.status !== 303 || !answered.location) {
            throw new Error(`consent: ${answered.status} ${answered.text.slice(0, 300)}`);
        }
        return new URL(answered.location);
    }
}

function unescape(html) {
    return html.replaceAll("&quot;", '"').replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

function transportFor(provider) {
    return new StreamableHTTPClientTransport(new URL(args.url), { authProvider: provider, fetch: sdkFetch });
}

async function connected(provider) {
    const client = new Client({ name: "quarry-ts-oauth-test", version: "1.0.0" }, { capabilities: {} });
    await client.connect(transportFor(provider));
    return client;
}

/**
 * The SDK's sign-in, as an application drives it: connect, which ends in
 * UnauthorizedError once the SDK has sent the person away; the person's
 * answer to transport.finishAuth(); connect again.
 */
async function signIn(provider, label) {
    const seen = {};
    const transport = transportFor(provider);
    const first = new Client({ name: "quarry-ts-oauth-test", version: "1.0.0" }, { capabilities: {} });
    try {
        await first.connect(transport);
        problems.push(`${label}: connected without signing in`);
        return seen;
    } catch (error) {
        if (!(error instanceof UnauthorizedError)) {
            seen.error = described(error);
            problems.push(`${label}: the SDK stopped before sending the person: ${error.message}`);
            return seen;
        }
    }
    const asked = provider.authorizationUrl;
    if (!asked) {
        problems.push(`${label}: no authorization URL`);
        return seen;
    }
    seen.authorize = `${asked.origin}${asked.pathname}`;
    seen.asked = Object.fromEntries(
        ["response_type", "code_challenge_method", "scope", "resource", "redirect_uri"].map((k) => [k, asked.searchParams.get(k)]),
    );
    seen.registered = {
        client_id: provider.client?.client_id ?? null,
        token_endpoint_auth_method: provider.client?.token_endpoint_auth_method ?? null,
        client_secret: provider.client?.client_secret !== undefined,
    };
    const back = await new Person().allow(asked.href);
    if (back.searchParams.get("error")) {
        problems.push(`${label}: refused: ${back.search}`);
        return seen;
    }
    seen.state_kept = back.searchParams.get("state") === provider.sentState;
    seen.iss = back.searchParams.get("iss");
    if (!seen.state_kept) problems.push(`${label}: the state did not come back`);
    await transport.finishAuth(back.searchParams.get("code"));
    const tokens = provider.tokens();
    seen.first = { scope: tokens?.scope ?? null, expires_in: tokens?.expires_in ?? null, refresh_token: !!tokens?.refresh_token };

    const client = await connected(provider);
    seen.tools = (await client.listTools()).tools.map((t) => t.name).sort();
    const found = await client.callTool({ name: "search", arguments: { query: "checkout timeouts" } });
    seen.search = { is_error: found.isError ?? false, results: found.structuredContent?.results?.length ?? 0 };
    if (found.isError || !(seen.search.results > 0)) problems.push(`${label}: search: ${JSON.stringify(found.content)}`);
    seen.client = client;
    return seen;
}

async function main() {
    // 1. Sign in, registering dynamically as a public client.
    const provider = new Memory({
        client_name: "Quarry TS SDK test client",
        redirect_uris: [REDIRECT],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
    });
    const signedIn = await signIn(provider, "sign-in");
    const client = signedIn.client;
    delete signedIn.client;
    summary.sign_in = signedIn;
    // What the SDK did before the person was asked: the 401, the metadata, registration.
    const exchanged = sent.findIndex((r) => r.path === "/oauth/token");
    summary.discovery = sent.slice(0, exchanged < 0 ? sent.length : exchanged).map((r) => `${r.http} ${r.path} ${r.status}`);
    if (!client) return;

    // 2. Two calls in flight once the access token has expired.
    const expiresIn = provider.tokens()?.expires_in;
    if (!expiresIn || expiresIn > 30) {
        problems.push(`access tokens live ${expiresIn} s: start the demo with --token-ttl-seconds 4`);
        return;
    }
    await new Promise((resolve) => setTimeout(resolve, (expiresIn + 1) * 1000));
    const before = provider.tokens();
    const tokenSets = provider.history.length;
    holdRefreshes(2);
    const settled = await Promise.allSettled([
        client.callTool({ name: "list_connectors", arguments: {} }),
        client.callTool({ name: "search", arguments: { query: "refund policy" } }),
    ]);
    barrier = null;
    const outcome = (s) =>
        s.status === "fulfilled" ? { ok: s.value.isError !== true, is_error: s.value.isError ?? false } : { ok: false, thrown: described(s.reason) };
    const concurrent = {
        calls: settled.map(outcome),
        refreshes: refreshes.map((r) => ({ status: r.status, error: r.error ?? null, barrier: r.barrier, same_token: r.refresh_token === before?.refresh_token })),
        new_token_sets: provider.history.length - tokenSets,
        // What the SDK threw away ("tokens" after a refused refresh).
        invalidated: [...provider.invalidated],
    };
    summary.concurrent_refresh = concurrent;
    if (refreshes.length !== 2 || !refreshes.every((r) => r.refresh_token === before?.refresh_token)) {
        problems.push(`concurrent refresh: not two refreshes with the same token: ${JSON.stringify(concurrent.refreshes)}`);
    }
    concurrent.calls.forEach((c, i) => {
        if (!c.ok) problems.push(`concurrent call ${i + 1} failed: ${JSON.stringify(c)}`);
    });
    const [a, b] = provider.history.slice(tokenSets);
    if (a && b) concurrent.same_new_pair = a.access_token === b.access_token && a.refresh_token === b.refresh_token;

    // A later call, as the person's next question: signed in still?
    const urlBefore = provider.authorizationUrl?.href;
    let later;
    try {
        const again = await connected(provider);
        const listed = await again.callTool({ name: "list_connectors", arguments: {} });
        later = { ok: listed.isError !== true };
        await again.close();
    } catch (error) {
        later = { ok: false, thrown: described(error) };
    }
    later.signed_out = provider.tokens() === undefined || provider.authorizationUrl?.href !== urlBefore;
    summary.later_call = later;
    if (!later.ok) problems.push(`after the concurrent refresh the person is signed out: ${JSON.stringify(later)}`);
    await client.close().catch(() => {});

    // 3. A client that asks for client_secret_post: registered as public.
    const secretPost = new Memory({
        client_name: "Quarry TS SDK test client (client_secret_post)",
        redirect_uris: [REDIRECT],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
    });
    const posted = await signIn(secretPost, "client_secret_post");
    await posted.client?.close().catch(() => {});
    delete posted.client;
    summary.client_secret_post = posted;
    if (posted.registered && posted.registered.token_endpoint_auth_method !== "none") {
        problems.push(`client_secret_post: registered as ${posted.registered.token_endpoint_auth_method}, not none`);
    }
    if (posted.registered?.client_secret) problems.push("client_secret_post: a client secret was issued");
}

try {
    await main();
} catch (error) {
    problems.push(`stopped: ${error.stack ?? error}`);
}
summary.requests = sent.map((r) => `${r.http} ${r.path}${r.grant ? ` (${r.grant})` : ""} ${r.status}`);
summary.problems = problems;
say(summary);
process.exit(problems.length === 0 ? 0 : 1);
