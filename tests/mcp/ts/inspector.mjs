// The MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned in
// package.json; it is built on the SDK's next generation,
// @modelcontextprotocol/client) against Quarry's /mcp, for tests/mcp_ts.rs:
//
//     NODE_EXTRA_CA_CERTS=CA.pem node inspector.mjs --url URL --token TOKEN
//
// Runs `inspector --cli URL --transport http --header "Authorization: ..."`
// from target/node (no npx) in both protocol eras (legacy: `initialize`;
// modern: 2026-07-28's `server/discover`): `tools/list`, a `tools/call` of
// `list_connectors`, and a `tools/call` of `fetch` with an unknown id, whose
// tool error must come back as the result (the CLI prints it and exits 5,
// "tool_error"), not as the CLI's own failure to accept the answer (exit 1).
// Then `tools/list --strict`: the Inspector's portability report on the
// schemas. trace-fetch.mjs, preloaded, records what each run sent. Prints
// one JSON summary line; exits 1 when it lists problems.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { MODULES, options, say, sameJson, version } from "./common.mjs";

const EXPECTED_TOOLS = ["deep_search", "fetch", "list_connectors", "query", "search"];
const CLI = join(MODULES, "@modelcontextprotocol/inspector/clients/launcher/build/index.js");
const TRACE = new URL("./trace-fetch.mjs", import.meta.url).href;
/** The CLI's exit codes (its EXIT_CODES). */
const TOOL_ERROR = 5;

const args = options(["url", "token"]);
const problems = [];
// The Inspector keeps a catalog and OAuth state under $HOME/.mcp-inspector:
// a home of this run's own.
const home = mkdtempSync(join(tmpdir(), "quarry-inspector-"));

/** One CLI run: its exit code, parsed stdout, stderr and what it sent. */
function inspector(era, cliArgs) {
    const trace = join(home, `trace-${Math.random().toString(36).slice(2)}.jsonl`);
    const run = spawnSync(
        process.execPath,
        [
            "--import",
            TRACE,
            CLI,
            "--cli",
            args.url,
            "--transport",
            "http",
            "--header",
            `Authorization: Bearer ${args.token}`,
            "--protocol-era",
            era,
            "--format",
            "json",
            ...cliArgs,
        ],
        {
            encoding: "utf8",
            timeout: 120_000,
            env: { ...process.env, HOME: home, QUARRY_TRACE_FILE: trace, NO_COLOR: "1" },
        },
    );
    let output = null;
    try {
        output = JSON.parse(run.stdout.trim().split("\n").pop());
    } catch {
        // Not JSON (or nothing).
    }
    let sent = [];
    try {
        sent = readFileSync(trace, "utf8")
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line));
    } catch {
        // Nothing was sent.
    }
    return {
        status: run.status,
        output,
        stderr: (run.stderr ?? "").slice(-2000),
        error: run.error ? String(run.error) : undefined,
        sent,
    };
}

/** The JSON of a result's text block, or null. */
function textJson(result) {
    const text = (result?.content ?? []).find((c) => c.type === "text")?.text;
    try {
        return JSON.parse(text);
    } catch {
        return null;
    }
}

const summary = {
    inspector: version("@modelcontextprotocol/inspector"),
    client: version("@modelcontextprotocol/client"),
    eras: {},
};

for (const era of ["legacy", "modern"]) {
    const seen = {};
    summary.eras[era] = seen;
    const fail = (what) => problems.push(`${era}: ${what}`);

    const listed = inspector(era, ["--method", "tools/list"]);
    seen.list_status = listed.status;
    seen.tools = (listed.output?.result?.tools ?? []).map((t) => t.name).sort();
    if (listed.status !== 0) fail(`tools/list exited ${listed.status}: ${listed.stderr}`);
    if (!sameJson(seen.tools, EXPECTED_TOOLS)) fail(`tools/list: ${seen.tools}`);
    // What the CLI sent: the handshake and the protocol version it spoke.
    seen.methods = listed.sent.filter((r) => r.method).map((r) => r.method);
    seen.protocol_versions = [...new Set(listed.sent.map((r) => r.protocol_version).filter(Boolean))];
    seen.accept = [...new Set(listed.sent.filter((r) => r.http === "POST").map((r) => r.accept))];

    const called = inspector(era, ["--method", "tools/call", "--tool-name", "list_connectors"]);
    const result = called.output?.result;
    seen.list_connectors = {
        status: called.status,
        is_error: result?.isError ?? null,
        connectors: result?.structuredContent?.connectors?.length ?? null,
    };
    if (called.status !== 0 || result?.isError !== false || !(seen.list_connectors.connectors > 0)) {
        fail(`tools/call list_connectors: exit ${called.status}, ${JSON.stringify(result ?? called.stderr)}`);
    }

    const refused = inspector(era, [
        "--method",
        "tools/call",
        "--tool-name",
        "fetch",
        "--tool-args-json",
        JSON.stringify({ id: "doc_unknown" }),
    ]);
    const answer = refused.output?.result;
    seen.fetch_unknown = {
        status: refused.status,
        is_error: answer?.isError ?? null,
        type: textJson(answer)?.error?.type ?? null,
        stderr: refused.status === TOOL_ERROR ? undefined : refused.stderr.trim(),
    };
    if (refused.status !== TOOL_ERROR || answer?.isError !== true || seen.fetch_unknown.type !== "not_found") {
        fail(
            `tools/call fetch of an unknown id: not a tool error naming not_found: exit ${refused.status}, ` +
                `${JSON.stringify(answer ?? null)} ${refused.stderr.trim()}`,
        );
    }
}

// The Inspector's portability report on the tools' schemas (errors fail
// the run with exit 6; warnings are shown).
const strict = inspector("modern", ["--method", "tools/list", "--strict"]);
const findings = (strict.output?.schemaFindings ?? []).flatMap((tool) =>
    (tool.findings ?? []).map((f) => ({ tool: tool.toolName, ...f })),
);
summary.strict = {
    status: strict.status,
    errors: findings.filter((f) => f.severity === "error").length,
    warnings: findings.filter((f) => f.severity === "warning").length,
    // Where and which rule, without the explanations.
    findings: findings.map((f) => `${f.severity} ${f.rule}: ${f.tool} ${f.schema}.${f.path}`),
};
if (strict.status !== 0) problems.push(`tools/list --strict exited ${strict.status}: ${strict.stderr}`);

rmSync(home, { recursive: true, force: true });
summary.problems = problems;
say(summary);
process.exit(problems.length === 0 ? 0 : 1);
