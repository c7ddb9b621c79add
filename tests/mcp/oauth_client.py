"""An MCP client that signs in with OAuth, on the official Python SDK's
OAuthClientProvider (mcp 2.3.0), for tests/mcp_oauth.rs.

    oauth_client.py --url URL --ca CA.pem --redirect-uri URI
                    [--client-metadata-url URL]

It connects without a token, so the SDK finds the authorization server
from the 401, registers (dynamic registration, or its Client ID Metadata
Document when --client-metadata-url is given) and sends the person to
consent: this prints {"authorize": URL} on stdout, and reads from stdin
the address the person's browser was sent back to (the test plays the
person, in the dashboard). The SDK exchanges the code (PKCE), then this
lists the tools and calls search; waits for the access token to expire
and calls again, which makes the SDK refresh it. Prints one JSON summary
last, with the tokens it held (the test revokes them and checks).
"""

import asyncio
import sys
import time
from urllib.parse import parse_qs, urlparse

from connection import connect, main, say
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata


class Memory:
    """Token storage for one run, keeping every token it was given."""

    def __init__(self):
        self.tokens = None
        self.client = None
        self.history = []

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens
        self.history.append(tokens)

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


async def send_person(url):
    say({"authorize": url})


async def person_came_back():
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    query = parse_qs(urlparse(line.strip()).query)
    if "error" in query:
        raise RuntimeError(f"authorization refused: {query}")
    first = lambda name: query.get(name, [None])[0]  # noqa: E731
    return AuthorizationCodeResult(code=first("code"), state=first("state"), iss=first("iss"))


async def run(args):
    storage = Memory()
    metadata = OAuthClientMetadata(
        client_name="Quarry test client",
        redirect_uris=[args.redirect_uri],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    auth = OAuthClientProvider(
        server_url=args.url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=send_person,
        callback_handler=person_came_back,
        client_metadata_url=args.client_metadata_url,
    )
    http, client = connect(args.url, args.ca, auth=auth)
    summary = {}
    async with http, client as client:
        summary["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        found = await client.call_tool("search", {"query": "checkout timeouts"})
        summary["search_error"] = found.is_error
        summary["search_results"] = len((found.structured_content or {}).get("results", []))
        first = storage.tokens
        summary["client_id"] = storage.client.client_id
        summary["first"] = {
            "access_token": first.access_token,
            "refresh_token": first.refresh_token,
            "scope": first.scope,
            "expires_in": first.expires_in,
        }
        # Past the access token's life: the SDK refreshes before calling.
        time.sleep((first.expires_in or 0) + 1)
        listed = await client.call_tool("list_connectors", {})
        summary["after_expiry_error"] = listed.is_error
        last = storage.tokens
        summary["last"] = {"access_token": last.access_token, "refresh_token": last.refresh_token}
        summary["token_sets"] = len(storage.history)
    return summary


if __name__ == "__main__":
    main(
        run,
        (["--redirect-uri"], {"required": True}),
        (["--client-metadata-url"], {}),
    )
