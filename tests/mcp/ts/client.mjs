// An MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk,
// pinned in package.json), for tests/mcp_ts.rs:
//
//     NODE_EXTRA_CA_CERTS=CA.pem node client.mjs --url URL --token TOKEN
//
// Connects to Quarry's /mcp with the SDK's Client and
// StreamableHTTPClientTransport and a bearer token, lists the tools (which
// makes the SDK compile each tool's outputSchema), calls every tool and
// checks each result as the SDK does (client.callTool validates
// structuredContent against the outputSchema and throws when it does not
// match), and again against JSON Schema 2020-12 (the dialect the schemas
// declare; the SDK's Ajv reads them as draft-07). Then provokes tool errors,
// which must reach the caller as an `isError: true` result naming Quarry's
// error, not as an exception the SDK throws. Then raw requests: a POST with
// `Accept: */*` is answered with JSON, and malformed JSON with a JSON-RPC
// parse error (-32700). Prints one JSON summary line; exits 1 when it lists
// problems.

import { MODULES, described, load, options, say, sameJson, sdk, textJson, version } from "./common.mjs";

const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { AjvJsonSchemaValidator } = await sdk("validation/ajv-provider.js");
const Ajv2020 = (await load("ajv/dist/2020.js")).default.default;
const addFormats = (await load("ajv-formats/dist/index.js")).default.default;

const EXPECTED_TOOLS = ["deep_search", "fetch", "list_connectors", "query", "search"];
const args = options(["url", "token"]);
const problems = [];

// Every request the transport sends, as it sent it (the headers the SDK
// chooses are part of what the server must accept).
const sent = [];
async function recordingFetch(url, init = {}) {
    const headers = new Headers(init.headers);
    let method = null;
    try {
        method = JSON.parse(init.body).method ?? null;
    } catch {
        // GET, or no JSON body.
    }
    const response = await fetch(url, init);
    sent.push({
        http: init.method ?? "GET",
        method,
        accept: headers.get("accept"),
        protocol_version: headers.get("mcp-protocol-version"),
        status: response.status,
    });
    return response;
}

// The SDK's own validator (what callTool uses), and a 2020-12 one.
const sdkValidator = new AjvJsonSchemaValidator();
const ajv2020 = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv2020);

const transport = new StreamableHTTPClientTransport(new URL(args.url), {
    requestInit: { headers: { Authorization: `Bearer ${args.token}` } },
    fetch: recordingFetch,
});
const client = new Client({ name: "quarry-ts-test", version: "1.0.0" }, { capabilities: {} });
const summary = { sdk: version("@modelcontextprotocol/sdk"), modules: MODULES };

async function main() {
    await client.connect(transport);
    summary.protocol_version = transport.protocolVersion ?? null;
    summary.server = client.getServerVersion() ?? null;

    const { tools } = await client.listTools();
    summary.tools = tools.map((t) => t.name).sort();
    if (!sameJson(summary.tools, EXPECTED_TOOLS)) problems.push(`tools: ${summary.tools}`);
    const schemas = {};
    for (const tool of tools) {
        if (!tool.title) problems.push(`${tool.name}: no title`);
        if (tool.annotations?.readOnlyHint !== true) problems.push(`${tool.name}: not readOnlyHint`);
        if (tool.inputSchema?.type !== "object") problems.push(`${tool.name}: inputSchema is not an object schema`);
        if (!tool.outputSchema) problems.push(`${tool.name}: no outputSchema`);
        schemas[tool.name] = tool.outputSchema ?? {};
        try {
            ajv2020.compile(schemas[tool.name]);
        } catch (error) {
            problems.push(`${tool.name}: its outputSchema does not compile as 2020-12: ${error.message}`);
        }
    }

    summary.calls = {};
    const progress = {};
    // One successful call: the SDK's answer, checked; its structuredContent.
    async function call(name, toolArgs, withProgress = false) {
        const own = [];
        const record = { ok: false, problems: own };
        summary.calls[name] = record;
        let result;
        try {
            const callOptions = withProgress
                ? {
                      onprogress: (p) => (progress[name] ??= []).push(p.progress),
                      resetTimeoutOnProgress: true,
                  }
                : undefined;
            result = await client.callTool({ name, arguments: toolArgs }, undefined, callOptions);
        } catch (error) {
            // The SDK refused the answer (or the call failed).
            own.push(`callTool threw: ${error.code ?? ""} ${error.message}`);
            problems.push(`${name}: callTool threw: ${error.message}`);
            return null;
        }
        const structured = result.structuredContent;
        if (result.isError) {
            own.push(`isError: ${JSON.stringify(result.content)}`);
        } else if (!structured) {
            own.push("no structuredContent");
        } else {
            // What callTool already did, made visible; then 2020-12.
            const checked = sdkValidator.getValidator(schemas[name])(structured);
            if (!checked.valid) own.push(`the SDK's validator: ${checked.errorMessage}`);
            const strict = ajv2020.compile(schemas[name]);
            if (!strict(structured)) own.push(`2020-12: ${ajv2020.errorsText(strict.errors)}`);
            const texts = result.content.filter((c) => c.type === "text");
            if (texts.length !== 1) own.push(`${texts.length} text blocks, not one`);
            else if (!sameJson(textJson(result), structured)) own.push("the text block is not the structuredContent");
        }
        for (const p of own) problems.push(`${name}: ${p}`);
        record.ok = own.length === 0;
        return record.ok ? structured : null;
    }

    const listed = await call("list_connectors", {});
    summary.connected = (listed?.connectors ?? []).filter((c) => c.connected).map((c) => c.id).sort();

    const found = await call("search", { query: "checkout timeouts" }, true);
    const results = found?.results ?? [];
    summary.calls.search.count = results.length;
    if (results.length === 0) problems.push("search: no results");
    if (results.length > 0) {
        const first = results[0];
        summary.search_first = first;
        const fetched = await call("fetch", { id: first.id });
        summary.fetched = fetched;
        if (fetched && (fetched.text !== first.text || fetched.url !== first.url)) {
            problems.push("fetch: not the passage search returned");
        }
    }
    const answered = await call("query", { query: "checkout timeouts", max_results: 3 }, true);
    summary.calls.query.connectors_searched = answered?.search_summary?.connectors_searched ?? null;
    const deep = await call("deep_search", { query: "checkout" });
    summary.calls.deep_search.results = deep?.archive_results?.length ?? null;
    summary.progress = Object.fromEntries(Object.entries(progress).map(([k, v]) => [k, v.length]));

    // Errors: a tool error must reach the caller as a result.
    summary.errors = {};
    async function refused(label, name, toolArgs, wantType, wantInMessage) {
        const seen = { reached: false };
        summary.errors[label] = seen;
        try {
            const result = await client.callTool({ name, arguments: toolArgs });
            seen.reached = true;
            seen.is_error = result.isError === true;
            seen.structured_content = result.structuredContent ?? null;
            const body = textJson(result);
            seen.type = body?.error?.type ?? null;
            seen.message = body?.error?.message ?? null;
            if (!seen.is_error) problems.push(`${label}: not an isError result`);
            if (seen.type !== wantType) {
                problems.push(`${label}: the text does not name Quarry's error ${wantType}: ${JSON.stringify(result.content)}`);
            }
            if (wantInMessage && !(seen.message ?? "").includes(wantInMessage)) {
                problems.push(`${label}: the message does not name ${wantInMessage}: ${seen.message}`);
            }
        } catch (error) {
            seen.thrown = described(error);
            problems.push(`${label}: callTool threw instead of returning the tool error: ${error.message}`);
        }
    }
    await refused("query_max_results", "query", { query: "x", max_results: 1000 }, "bad_request", "max_results");
    await refused("fetch_unknown", "fetch", { id: "doc_unknown" }, "not_found");
    await refused("query_empty", "query", { query: "   " }, "bad_request");

    await client.close();
    summary.requests = sent;
    summary.accept = [...new Set(sent.filter((r) => r.http === "POST").map((r) => r.accept))];

    summary.raw = await rawChecks();
}

// Raw requests, as clients that are not the SDK send them.
async function rawChecks() {
    const raw = {};
    const post = (body, accept) => {
        const headers = {
            authorization: `Bearer ${args.token}`,
            "content-type": "application/json",
            "mcp-protocol-version": "2025-11-25",
        };
        if (accept !== null) headers.accept = accept;
        return fetch(args.url, { method: "POST", headers, body });
    };
    const list = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "list_connectors", arguments: {} },
    });
    const answer = async (response) => {
        const text = await response.text();
        const contentType = response.headers.get("content-type");
        let json = null;
        try {
            json = JSON.parse(text);
        } catch {
            // Not JSON.
        }
        return { status: response.status, content_type: contentType, json, text: json ? undefined : text.slice(0, 300) };
    };

    // Any media type: the answer must be JSON (a client that does not
    // negotiate takes what it is given; JSON is the one that needs no SSE).
    const any = await answer(await post(list, "*/*"));
    raw.accept_any = {
        status: any.status,
        content_type: any.content_type,
        result: any.json?.result?.structuredContent ? "structured" : (any.json?.error ?? any.text ?? null),
    };
    if (any.status !== 200 || !(any.content_type ?? "").startsWith("application/json") || !any.json?.result) {
        problems.push(`Accept: */*: not answered with JSON: ${any.status} ${any.content_type} ${any.text ?? JSON.stringify(any.json)}`);
    }
    // Not asserted, shown: what a client that sends only one type, or no
    // Accept at all, gets.
    for (const [label, accept] of [["accept_json_only", "application/json"], ["no_accept", null]]) {
        const got = await answer(await post(list, accept));
        raw[label] = { status: got.status, content_type: got.content_type };
    }

    // Malformed JSON: a JSON-RPC parse error, as JSON.
    const broken = await answer(await post('{"jsonrpc": "2.0", "id": 1, "method": "tools/li', "application/json, text/event-stream"));
    raw.malformed = {
        status: broken.status,
        content_type: broken.content_type,
        code: broken.json?.error?.code ?? null,
        text: broken.text,
    };
    if (broken.json?.error?.code !== -32700) {
        problems.push(`malformed JSON: not a JSON-RPC -32700 error: ${broken.status} ${broken.content_type} ${broken.text ?? JSON.stringify(broken.json)}`);
    }
    return raw;
}

try {
    await main();
} catch (error) {
    problems.push(`stopped: ${error.stack ?? error}`);
}
summary.problems = problems;
say(summary);
process.exit(problems.length === 0 ? 0 : 1);
