"""An MCP client on the official Python SDK (mcp 2.3.0), for tests/mcp.rs.

    client.py --url URL --ca CA.pem --token TOKEN --mode auto|legacy

Connects to Quarry's /mcp (auto: server/discover, the 2026-07-28 protocol;
legacy: the initialize handshake), lists the tools, checks each one's
title, readOnlyHint, inputSchema and outputSchema, calls each tool and
checks its structuredContent against the outputSchema and against the
text copy, then prints one JSON summary on stdout. Problems found are
listed in the summary ("problems"), not raised, so the test shows them
all at once.
"""

import json

import jsonschema
from connection import connect, main

EXPECTED_TOOLS = ["deep_search", "fetch", "list_connectors", "query", "search"]


def check_result(name, result, schema, problems):
    """The structured answer of a successful call, checked."""
    if result.is_error:
        problems.append(f"{name}: isError: {result.content}")
        return None
    structured = result.structured_content
    if structured is None:
        problems.append(f"{name}: no structuredContent")
        return None
    try:
        jsonschema.validate(structured, schema)
    except jsonschema.ValidationError as error:
        problems.append(f"{name}: structuredContent does not match the outputSchema: {error.message}")
    texts = [c for c in result.content if c.type == "text"]
    if len(texts) != 1:
        problems.append(f"{name}: {len(texts)} text blocks, not one")
    elif json.loads(texts[0].text) != structured:
        problems.append(f"{name}: the text block is not the structuredContent")
    return structured


def error_type(name, result, problems):
    """The contract's error type of a refused call."""
    if not result.is_error:
        problems.append(f"{name}: expected an isError result")
        return None
    body = result.structured_content or json.loads(result.content[0].text)
    return body.get("error", {}).get("type")


async def run(args):
    problems = []
    progress = {}

    def on_progress(tool):
        async def record(value, total, message):
            progress.setdefault(tool, []).append(value)

        return record

    http, client = connect(args.url, args.ca, args.mode, headers={"Authorization": f"Bearer {args.token}"})
    async with http, client as client:
        summary = {"protocol_version": client.protocol_version}
        tools = (await client.list_tools()).tools
        summary["tools"] = sorted(t.name for t in tools)
        if summary["tools"] != EXPECTED_TOOLS:
            problems.append(f"tools: {summary['tools']}")
        schemas = {}
        for tool in tools:
            if not tool.title:
                problems.append(f"{tool.name}: no title")
            if not (tool.annotations and tool.annotations.read_only_hint is True):
                problems.append(f"{tool.name}: not readOnlyHint")
            if not (tool.input_schema and tool.input_schema.get("type") == "object"):
                problems.append(f"{tool.name}: inputSchema is not an object schema")
            if not tool.output_schema:
                problems.append(f"{tool.name}: no outputSchema")
            schemas[tool.name] = tool.output_schema or {}

        async def call(name, arguments, with_progress=False):
            callback = on_progress(name) if with_progress else None
            return await client.call_tool(name, arguments, progress_callback=callback)

        listed = check_result("list_connectors", await call("list_connectors", {}), schemas["list_connectors"], problems)
        summary["connected"] = sorted(c["id"] for c in (listed or {}).get("connectors", []) if c["connected"])

        found = check_result(
            "search", await call("search", {"query": "checkout timeouts"}, True), schemas["search"], problems
        )
        results = (found or {}).get("results", [])
        summary["search"] = {"count": len(results), "first": results[0] if results else None}

        if results:
            first = results[0]
            fetched = check_result("fetch", await call("fetch", {"id": first["id"]}), schemas["fetch"], problems)
            summary["fetch"] = fetched
            if fetched and (fetched["text"] != first["text"] or fetched["url"] != first["url"]):
                problems.append("fetch: not the passage search returned")

        answered = check_result(
            "query",
            await call("query", {"query": "checkout timeouts", "max_results": 3}, True),
            schemas["query"],
            problems,
        )
        summary["query"] = {
            "connectors_searched": (answered or {}).get("search_summary", {}).get("connectors_searched"),
            "query_id": (answered or {}).get("query_id"),
        }

        deep = check_result("deep_search", await call("deep_search", {"query": "checkout"}), schemas["deep_search"], problems)
        summary["deep_search"] = {"results": len((deep or {}).get("archive_results", []))}

        summary["errors"] = {
            "fetch_unknown": error_type("fetch", await call("fetch", {"id": "doc_unknown"}), problems),
            "query_empty": error_type("query", await call("query", {"query": "   "}), problems),
        }
        summary["progress"] = progress
        summary["problems"] = problems
        return summary


if __name__ == "__main__":
    main(
        run,
        (["--token"], {"required": True}),
        (["--mode"], {"choices": ["auto", "legacy"], "default": "auto"}),
    )
