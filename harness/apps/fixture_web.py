#!/usr/bin/python3
"""Serves cua's web conformance form (fixture.html, beside this file) on the loopback and
appends what the page posts to /journal to the fixture journal (see journal.py).

Usage: fixture_web.py [PORT]   (default: a free port)
Prints "http://127.0.0.1:PORT/fixture.html" on its first line once it serves, then runs
until killed. Only files of this folder are served; nothing is written but the journal.

Environment:
  CUA_FIXTURE_JOURNAL  journal path (default: no journal)
"""
import functools
import http.server
import json
import os
import sys

from journal import log  # harness/apps/journal.py, beside this file

HERE = os.path.dirname(os.path.abspath(__file__))


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/journal":
            self.send_error(404)
            return
        length = int(self.headers.get("Content-Length", "0"))
        try:
            fields = json.loads(self.rfile.read(length))
            event = fields.pop("event")
        except (ValueError, KeyError, TypeError, AttributeError):
            self.send_error(400, "a JSON object with an event field")
            return
        log(event, **fields)
        self.send_response(204)
        self.end_headers()

    def end_headers(self):
        # Every load reads the page as it is on disk.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, *args):
        pass


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    handler = functools.partial(Handler, directory=HERE)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    print(f"http://127.0.0.1:{server.server_address[1]}/fixture.html", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
