"""What the MCP test clients share: the command line, the connection to
Quarry's /mcp over HTTPS (trusting the test's CA) and the JSON lines they
print for the Rust test that runs them."""

import argparse
import asyncio
import json
import ssl

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def connect(url, ca, mode="auto", **http_options):
    """The HTTP client and the MCP client on it; enter both (`async with
    http, client`), so that both are closed. `http_options` go to httpx
    (headers, auth)."""
    http = httpx2.AsyncClient(
        verify=ssl.create_default_context(cafile=ca),
        timeout=httpx2.Timeout(30, read=300),
        **http_options,
    )
    return http, Client(streamable_http_client(url, http_client=http), mode=mode)


def say(line):
    """One JSON line on stdout, flushed: the test reads it at once."""
    print(json.dumps(line), flush=True)


def main(run, *options):
    """Reads --url, --ca and the script's own options (each a pair of
    add_argument's names and settings), runs `run(args)` and prints the
    summary it returns."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--ca", required=True)
    for names, settings in options:
        parser.add_argument(*names, **settings)
    say(asyncio.run(run(parser.parse_args())))
