"""What the latency benches share: one reviewloop instance on a fresh
SQLite database, pinned to core 0, and keys made with its command line."""
import json
import os
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("REVIEWLOOP_BENCH_BIN", os.path.join(ROOT, "target", "release", "reviewloop"))


def call(method, url, key=None, body=None, headers=None, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url, data=data, method=method)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    with urllib.request.urlopen(request) as reply:
        text = reply.read()
        return json.loads(text) if text else None


def start(port, env):
    """The server on core 0 with `env` added, once it answers: (process,
    base URL, database URL)."""
    work = tempfile.mkdtemp()
    db = f"sqlite://{work}/bench.db"
    log = open(f"{work}/server.log", "w+")
    server = subprocess.Popen(["taskset", "-c", "0", BIN, "--bind", f"127.0.0.1:{port}", "--database-url", db],
                              env={**os.environ, "RUST_LOG": "warn", **env}, stderr=log, stdout=log)
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            call("GET", f"{base}/health")
            break
        except OSError:
            time.sleep(0.1)
    return server, base, db


def key(db, email, unlimited=False):
    """A new API key of `email`'s account; `unlimited`: an hourly allowance
    the bench cannot use up."""
    args = [BIN, "key", "create", "--email", email, "--json", "--database-url", db]
    if unlimited:
        args += ["--rate-limit", "1000000"]
    return json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)["api_key"]
