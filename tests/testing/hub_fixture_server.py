#!/usr/bin/env python3
"""A local stand-in for the Hugging Face Hub, for tests (no network).

  hub_fixture_server.py ROOT PORT_FILE LOG_FILE

Listens on 127.0.0.1, port 0 (the kernel picks one), writes "port=N" to
PORT_FILE once listening, and serves the files under ROOT at their paths
(a directory serves its index.json), as the Hub lays them out:
  ROOT/api/models/ORG/NAME/revision/REV      the model info JSON
  ROOT/... any file the rules below point at
GET and HEAD; single byte ranges ("Range: bytes=a-b", "a-", "-n") answered
206 with Content-Range, or 416; ETag is the sha1 of the content, as the Hub's
for small files.

ROOT/_rules.json, re-read on every request, is a list of rules tried in order;
each whose "match" regex matches the whole path applies, except that one with
"unless_token" is skipped for a request carrying "Authorization: Bearer <token>"
and one with "require_no_auth" for a request carrying any Authorization:
  "delay_ms": sleep first
  "headers": {name: value} added to the answer
  "status" (and "body"): answer that now
  "redirect": a re template (\\1 ...) for a 302 Location; answer now
  "rewrite": a re template for the path served instead; go on
Every request is logged to LOG_FILE as a JSON line: method, path, range,
authorization, status, bytes (the body sent) and size (of the file served).
"""
import hashlib
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.realpath(sys.argv[1])
PORT_FILE = sys.argv[2]
LOG_FILE = sys.argv[3]
LOG_LOCK = threading.Lock()


def load_rules():
    try:
        with open(os.path.join(ROOT, "_rules.json"), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        self.serve(head=False)

    def do_HEAD(self):
        self.serve(head=True)

    def reply(self, status, headers, body, head, size=None):
        # Logged before answering, so that a client that has its answer
        # finds its request in the log.
        with LOG_LOCK, open(LOG_FILE, "a", encoding="utf-8") as log:
            log.write(json.dumps({
                "method": self.command,
                "path": self.path,
                "range": self.headers.get("Range", ""),
                "authorization": self.headers.get("Authorization", ""),
                "status": status,
                "bytes": 0 if head else len(body),
                "size": size,
            }) + "\n")
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def serve(self, head):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        auth = self.headers.get("Authorization", "")
        headers = {}
        for rule in load_rules():
            m = re.fullmatch(rule["match"], path)
            if not m:
                continue
            if "unless_token" in rule and auth == "Bearer " + rule["unless_token"]:
                continue
            if rule.get("require_no_auth") and auth:
                continue
            if "delay_ms" in rule:
                time.sleep(rule["delay_ms"] / 1000.0)
            headers.update(rule.get("headers", {}))
            if "redirect" in rule:
                headers["Location"] = m.expand(rule["redirect"])
                return self.reply(302, headers, b"", head)
            if "status" in rule:
                return self.reply(rule["status"], headers, rule.get("body", "").encode(), head)
            if "rewrite" in rule:
                path = m.expand(rule["rewrite"])

        file = os.path.realpath(os.path.join(ROOT, path.lstrip("/")))
        if not file.startswith(ROOT + os.sep):
            return self.reply(404, headers, b"", head)
        if os.path.isdir(file):
            file = os.path.join(file, "index.json")
        if not os.path.isfile(file):
            return self.reply(404, headers, b"", head)
        with open(file, "rb") as f:
            data = f.read()
        size = len(data)
        headers["ETag"] = '"%s"' % hashlib.sha1(data).hexdigest()
        headers["Accept-Ranges"] = "bytes"
        wanted = self.headers.get("Range")
        if not wanted:
            return self.reply(200, headers, data, head, size)
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", wanted.strip())
        if not m or (m.group(1) == "" and m.group(2) == ""):
            return self.reply(400, headers, b"bad range", head, size)
        if m.group(1) == "":
            begin, end = max(0, size - int(m.group(2))), size - 1
        else:
            begin = int(m.group(1))
            end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
        if begin >= size or end < begin:
            headers["Content-Range"] = "bytes */%d" % size
            return self.reply(416, headers, b"", head, size)
        headers["Content-Range"] = "bytes %d-%d/%d" % (begin, end, size)
        return self.reply(206, headers, data[begin:end + 1], head, size)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = PORT_FILE + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("port=%d\n" % server.server_address[1])
    os.rename(tmp, PORT_FILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
