// Preloaded into the MCP Inspector (`node --import trace-fetch.mjs`) by
// inspector.mjs: appends one JSON line per request the process sends with
// fetch() to $QUARRY_TRACE_FILE (the JSON-RPC method, the
// MCP-Protocol-Version and Accept headers, the answer's status), so that the
// test sees which protocol the Inspector spoke. It changes nothing sent.
import { appendFileSync } from "node:fs";

const file = process.env.QUARRY_TRACE_FILE;
const original = globalThis.fetch;
if (file && original) {
    globalThis.fetch = async function traced(input, init = {}) {
        const request = input instanceof Request ? input : null;
        const headers = new Headers(init.headers ?? request?.headers);
        let method = null;
        try {
            method = JSON.parse(init.body).method ?? null;
        } catch {
            // GET, or no JSON body.
        }
        const response = await original.call(this, input, init);
        appendFileSync(
            file,
            JSON.stringify({
                url: String(request?.url ?? input),
                http: init.method ?? request?.method ?? "GET",
                method,
                protocol_version: headers.get("mcp-protocol-version"),
                accept: headers.get("accept"),
                status: response.status,
            }) + "\n",
        );
        return response;
    };
}
