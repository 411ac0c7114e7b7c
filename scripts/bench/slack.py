#!/usr/bin/env python3
"""Latency of a loop's Slack app, one instance on SQLite: from creating a
request to Slack's chat.postMessage, and from a signed click on its answer
button to the chat.update that says who answered. A stand-in for Slack's
Web API (this script) runs on another core than the server.

    scripts/bench/slack.py [REQUESTS]     (default 200, one at a time)

Uses target/release/reviewloop (REVIEWLOOP_BENCH_BIN for another build).
Prints p50 and p99 of both, in milliseconds.
"""
import hashlib
import hmac
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from one_instance import BIN, call, key, start

SECRET = "0123456789abcdef0123456789abcdef"
N = int(sys.argv[1]) if len(sys.argv) > 1 else 200

posted = {}  # request id -> time the post arrived
updated = {}  # ts -> time the update arrived
ts_of = {}  # request id -> ts
value_of = {}  # request id -> its first button's value
lock = threading.Condition()


class FakeSlack(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        now = time.monotonic()
        method = self.path.strip("/")
        answer = {"ok": True}
        if method == "chat.postMessage":
            data = json.loads(body)
            value = data["blocks"][2]["elements"][0].get("value", "")
            request = value.split(":")[0]
            with lock:
                ts = f"1700000000.{len(posted) + 1:06d}"
                posted[request] = now
                ts_of[request] = ts
                value_of[request] = value
                lock.notify_all()
            answer = {"ok": True, "channel": "C1", "ts": ts}
        elif method == "chat.update":
            data = json.loads(body)
            with lock:
                updated[data["ts"]] = now
                lock.notify_all()
        elif method == "users.info":
            answer = {"ok": True, "user": {"is_email_confirmed": True, "profile": {"email": "rev@example.com"}}}
        text = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)


def wait(predicate):
    with lock:
        while not predicate():
            if not lock.wait(timeout=10):
                raise SystemExit("bench: Slack stand-in heard nothing for 10 s")


def main():
    os.sched_setaffinity(0, {1})
    slack = ThreadingHTTPServer(("127.0.0.1", 0), FakeSlack)
    threading.Thread(target=slack.serve_forever, daemon=True).start()
    server, base, db = start(8377, {"REVIEWLOOP_SLACK_API_URL": f"http://127.0.0.1:{slack.server_port}"})
    try:
        admin = key(db, "admin@localhost", unlimited=True)
        rev = key(db, "rev@example.com")
        made = call("POST", f"{base}/v1/api/loops", admin, {"name": "Bench"})["data"]
        loop = made["loop"]["id"]
        call("POST", f"{base}/v1/api/loops/join", rev, {"invite_code": made["loop"]["invite_code"]})
        # A Slack app is set up by a person, signed in, on the loop's page.
        subprocess.run([BIN, "user", "set-password", "--email", "admin@localhost", "--database-url", db],
                       input="bench password 1", text=True, capture_output=True, check=True)
        jar = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())

        def form(path, fields):
            page = jar.open(f"{base}{path}").read().decode()
            token = re.search(r'name="csrf" value="([0-9a-f]{64})"', page).group(1)
            data = urllib.parse.urlencode({"csrf": token, **fields}).encode()
            request = urllib.request.Request(f"{base}{path if path != '/login' else '/login'}", data=data)
            request.add_header("Origin", base)
            return request
        jar.open(form("/login", {"email": "admin@localhost", "password": "bench password 1"}))
        edit = form(f"/app/loops/{loop}", {"name": "Bench", "slack_bot_token": "xoxb-bench-token",
                                           "slack_signing_secret": SECRET, "slack_channel": "C1"})
        edit.full_url = f"{base}/app/loops/{loop}/edit"
        jar.open(edit)
        to_post, to_update = [], []
        for _ in range(N):
            started = time.monotonic()
            created = call("POST", f"{base}/v1/loops/{loop}/requests", admin, {
                "request_text": "Ship it?", "type": "markdown", "response_type": "boolean",
                "response_config": {}, "priority": "high", "processing_type": "deferred",
                "default_response": False, "platform": "api"})
            rid = created["data"]["request"]["id"]
            wait(lambda: rid in posted)
            to_post.append((posted[rid] - started) * 1000)
            payload = json.dumps({"type": "block_actions", "user": {"id": "U1"}, "channel": {"id": "C1"},
                                  "actions": [{"action_id": "answer:0", "value": value_of[rid]}]})
            body = ("payload=" + urllib.parse.quote(payload)).encode()
            stamp = str(int(time.time()))
            signature = "v0=" + hmac.new(SECRET.encode(), b"v0:" + stamp.encode() + b":" + body,
                                         hashlib.sha256).hexdigest()
            clicked = time.monotonic()
            call("POST", f"{base}/slack/interactions", raw=body, headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature})
            ts = ts_of[rid]
            wait(lambda: ts in updated)
            to_update.append((updated[ts] - clicked) * 1000)

        def pct(values, p):
            values = sorted(values)
            return values[min(len(values) - 1, int(len(values) * p))]
        for name, values in [("create -> chat.postMessage", to_post), ("click -> chat.update", to_update)]:
            print(f"{name:28} p50 {statistics.median(values):7.1f} ms   p99 {pct(values, 0.99):7.1f} ms   (n={len(values)})")
    finally:
        server.terminate()
        server.wait()
        slack.shutdown()


if __name__ == "__main__":
    main()
