#!/usr/bin/env python3
"""The web application's weight and speed, as a reviewer meets it.

Starts the server (a release build by default) on a fresh SQLite database,
pinned to one core, fills a loop with N open requests (default 1,000)
through the API, signs in as the admin, and prints:
  - page weight in bytes: the inbox and a review page (HTML), the CSS and
    the script (each once; they are cached for a year by name);
  - time to first byte of the inbox (first page of 25 of the N open
    requests) and of a review page: median and p90 over 50 requests each,
    one at a time, from the other core.

    scripts/bench/web.py [N]        (REVIEWLOOP_BENCH_BIN picks the binary)
"""
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
BIN = os.environ.get("REVIEWLOOP_BENCH_BIN") or os.path.join(ROOT, "target", "release", "reviewloop")
PASSWORD = "correct horse battery"


def start(db_dir):
    env = dict(os.environ, RUST_LOG="warn")
    server = subprocess.Popen(
        ["taskset", "-c", "0", BIN, "--bind", "127.0.0.1:0",
         "--database-url", f"sqlite://{db_dir}/bench.db"],
        stderr=subprocess.PIPE, text=True, env=env)
    key = base = None
    for line in server.stderr:
        if line.startswith("reviewloop: bootstrap API key: "):
            key = line.split(": ", 2)[2].strip()
        if line.startswith("reviewloop: listening on "):
            base = line.split("listening on ")[1].strip()
            break
    return server, key, base


def conn(base):
    host, port = urllib.parse.urlparse(base).netloc.split(":")
    return http.client.HTTPConnection(host, int(port), timeout=30)


def call(base, method, path, body=None, headers=None):
    c = conn(base)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r, data


def api(base, key, method, path, body):
    r, data = call(base, method, path, json.dumps(body),
                   {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    return json.loads(data)["data"]


def ttfb(base, path, cookie, runs=50):
    times = []
    for _ in range(runs):
        c = conn(base)
        start = time.perf_counter()
        c.request("GET", path, headers={"Cookie": cookie})
        r = c.getresponse()
        r.read(1)
        times.append((time.perf_counter() - start) * 1000)
        r.read()
        c.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9) - 1]


def main():
    with tempfile.TemporaryDirectory() as db_dir:
        server, key, base = start(db_dir)
        try:
            subprocess.run([BIN, "user", "set-password", "--email", "admin@localhost",
                            "--database-url", f"sqlite://{db_dir}/bench.db"],
                           input=PASSWORD + "\n", text=True, check=True, capture_output=True)
            lp = api(base, key, "POST", "/v1/api/loops", {"name": "Bench"})["loop"]["id"]
            body = {"processing_type": "deferred", "type": "markdown", "priority": "medium",
                    "request_text": "## Check this post\n\nA user wrote *something*.",
                    "response_type": "boolean", "timeout_seconds": 86400, "platform": "api",
                    "context": {"author": "jane", "score": 0.5}}
            key_heavy = subprocess.run(
                [BIN, "key", "create", "--email", "admin@localhost", "--rate-limit", "1000000",
                 "--json", "--database-url", f"sqlite://{db_dir}/bench.db"],
                capture_output=True, text=True, check=True)
            key = json.loads(key_heavy.stdout)["api_key"]
            first = None
            for i in range(N):
                r = api(base, key, "POST", f"/v1/api/loops/{lp}/requests", body)
                first = first or r["request"]["id"]
            r, page = call(base, "GET", "/login")
            token = re.search(rb'name="csrf" value="([0-9a-f]{64})"', page).group(1).decode()
            form_cookie = r.getheader("set-cookie").split(";")[0]
            r, _ = call(base, "POST", "/login",
                        urllib.parse.urlencode({"csrf": token, "email": "admin@localhost",
                                                "password": PASSWORD}),
                        {"Content-Type": "application/x-www-form-urlencoded",
                         "Cookie": form_cookie, "Origin": base})
            session = r.getheader("set-cookie").split(";")[0]
            _, inbox = call(base, "GET", "/app", headers={"Cookie": session})
            _, review = call(base, "GET", f"/app/requests/{first}", headers={"Cookie": session})
            css = re.search(rb'href="(/static/[^"]+\.css)"', inbox).group(1).decode()
            js = re.search(rb'src="(/static/[^"]+\.js)"', inbox).group(1).decode()
            _, css_body = call(base, "GET", css)
            _, js_body = call(base, "GET", js)
            print(f"open requests: {N}")
            print(f"inbox HTML: {len(inbox)} B; review page HTML: {len(review)} B; "
                  f"CSS: {len(css_body)} B; script: {len(js_body)} B; "
                  f"first visit to the inbox in all: {len(inbox) + len(css_body) + len(js_body)} B")
            for name, path in [("inbox", "/app"), ("review page", f"/app/requests/{first}"),
                               ("health", "/health")]:
                med, p90 = ttfb(base, path, session)
                print(f"time to first byte, {name}: median {med:.1f} ms, p90 {p90:.1f} ms")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
