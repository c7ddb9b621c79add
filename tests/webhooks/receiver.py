#!/usr/bin/env python3
"""A webhook receiver for the black-box tests.

Verifies every delivery with the official Standard Webhooks library
(``standardwebhooks``, installed into target/py by tools/py-env), so that the
server's signatures are checked by an implementation other than its own.

Usage: receiver.py --out FILE [--fail-first N] [--port P]
                   [--secret whsec_... | --secret-file FILE]

- Listens on 127.0.0.1 (port 0: any free port) and prints the port on stdout
  once listening.
- Answers 503 with ``Retry-After: 1`` to the first N requests, 204 after.
- Appends one JSON line per request to FILE: ``n`` (1, 2, ...), ``status``
  (the answer), ``verified`` (bool), ``secret_index`` (which secret verified
  it), ``error`` (why not), ``payload`` (the verified event), the
  ``webhook-*`` headers, ``path`` and ``received_at`` (Unix seconds, float).
- Secrets: ``--secret``, or ``--secret-file`` holding one secret per line,
  read at every request (a test learns a secret only after registering the
  URL, that is, after starting the receiver).
- Exits when its stdin closes (the test that started it is gone) or after
  ``--max-seconds``.
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON lines file to append to")
    parser.add_argument("--fail-first", type=int, default=0, help="answer 503 to this many requests first")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--secret", action="append", default=[], help="a whsec_ secret (repeatable)")
    parser.add_argument("--secret-file", help="a file with one whsec_ secret per line, read per request")
    parser.add_argument("--max-seconds", type=float, default=900.0)
    return parser.parse_args()


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.count = 0

    def secrets(self):
        secrets = list(self.args.secret)
        if self.args.secret_file and os.path.exists(self.args.secret_file):
            with open(self.args.secret_file, encoding="utf-8") as f:
                secrets += [line.strip() for line in f if line.strip()]
        return secrets

    def next_number(self):
        with self.lock:
            self.count += 1
            return self.count

    def record(self, line):
        with self.lock:
            with open(self.args.out, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")


def verify(secrets, body, headers):
    """(payload, secret index, error): the first secret that verifies."""
    if not secrets:
        return None, None, "no secret configured yet"
    errors = []
    for index, secret in enumerate(secrets):
        try:
            return Webhook(secret).verify(body, headers), index, None
        except Exception as e:  # the library raises several kinds
            errors.append(f"{type(e).__name__}: {e}")
    return None, None, "; ".join(errors)


def handler_for(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            n = state.next_number()
            headers = {k.lower(): v for k, v in self.headers.items()}
            payload, index, error = verify(state.secrets(), body, headers)
            failing = n <= state.args.fail_first
            status = 503 if failing else 204
            state.record(
                {
                    "n": n,
                    "status": status,
                    "verified": error is None,
                    "secret_index": index,
                    "error": error,
                    "payload": payload,
                    "webhook_id": headers.get("webhook-id"),
                    "webhook_timestamp": headers.get("webhook-timestamp"),
                    "webhook_signature": headers.get("webhook-signature"),
                    "content_type": headers.get("content-type"),
                    "path": self.path,
                    "received_at": time.time(),
                }
            )
            self.send_response(status)
            if failing:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format, *args):  # quiet: the JSON lines say it all
            pass

    return Handler


def exit_when_orphaned(max_seconds):
    def watch_stdin():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    threading.Timer(max_seconds, lambda: os._exit(0)).start()


def main():
    args = parse_args()
    state = State(args)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler_for(state))
    server.daemon_threads = True
    exit_when_orphaned(args.max_seconds)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
