#!/usr/bin/env python3
"""Latency of Web Push, one instance on SQLite: from creating a request to
the push service's receipt of its push, with requests created at a steady
rate (default 100 a second for 10 seconds). This script plays the push
service, on another core than the server: it decrypts every push with
Mozilla's `http_ece` (RFC 8291, an implementation independent of the
server's) and checks its VAPID signature with `cryptography`, so a push
only counts once a browser could have read it.

    scripts/bench/push.py [RATE] [SECONDS]

Uses target/release/reviewloop (REVIEWLOOP_BENCH_BIN for another build);
installs its two packages in a virtual environment under target/.
Prints p50 and p99 in milliseconds.
"""
import base64
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from one_instance import ROOT, call, key, start

VENV = os.path.join(ROOT, "target", "bench-venv")
RATE = float(sys.argv[1]) if len(sys.argv) > 1 else 100.0
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0


def ensure_packages():
    """Re-runs this script in a virtual environment that has the packages."""
    if os.environ.get("REVIEWLOOP_BENCH_VENV") == "1":
        return
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "cryptography==48.0.0", "http_ece==1.2.1"],
                   check=True)
    os.execve(python, [python, *sys.argv], {**os.environ, "REVIEWLOOP_BENCH_VENV": "1"})


ensure_packages()

import http_ece  # noqa: E402
from cryptography.exceptions import InvalidSignature  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature  # noqa: E402

DEVICE = ec.generate_private_key(ec.SECP256R1())
AUTH = os.urandom(16)
received = {}  # request id -> when its push arrived
refused = []
lock = threading.Condition()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_vapid(header, origin):
    fields = dict(part.strip().split("=", 1) for part in header[len("vapid "):].split(","))
    head, claims, signature = fields["t"].split(".")
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(fields["k"]))
    raw = unb64url(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    key.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    claims = json.loads(unb64url(claims))
    if claims["aud"] != origin or claims["exp"] < time.time():
        raise ValueError(f"bad claims {claims}")


class PushService(BaseHTTPRequestHandler):
    origin = ""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        now = time.monotonic()
        try:
            check_vapid(self.headers["authorization"], self.origin)
            plain = http_ece.decrypt(body, private_key=DEVICE, auth_secret=AUTH, version="aes128gcm")
            request = json.loads(plain)["request_id"]
            with lock:
                received[request] = now
                lock.notify_all()
            self.send_response(201)
        except (InvalidSignature, ValueError, KeyError) as error:
            refused.append(repr(error))
            self.send_response(400)
        self.send_header("content-length", "0")
        self.end_headers()


def main():
    os.sched_setaffinity(0, {1})
    push = ThreadingHTTPServer(("127.0.0.1", 0), PushService)
    PushService.origin = f"http://127.0.0.1:{push.server_port}"
    threading.Thread(target=push.serve_forever, daemon=True).start()
    server, base, db = start(8378, {"REVIEWLOOP_ALLOW_PRIVATE_TARGETS": "true"})
    try:
        admin = key(db, "admin@localhost", unlimited=True)
        loop = call("POST", f"{base}/v1/api/loops", admin, {"name": "Bench"})["data"]["loop"]["id"]
        public = DEVICE.public_key().public_bytes(serialization.Encoding.X962,
                                                  serialization.PublicFormat.UncompressedPoint)
        call("POST", f"{base}/v1/api/push/subscriptions", admin, {
            "endpoint": f"{PushService.origin}/push/bench",
            "keys": {"p256dh": b64url(public), "auth": b64url(AUTH)}})
        created = {}
        total = int(RATE * SECONDS)
        first = time.monotonic()
        for n in range(total):
            # Open loop: each create starts on its own schedule.
            pause = first + n / RATE - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            began = time.monotonic()
            rid = call("POST", f"{base}/v1/loops/{loop}/requests", admin, {
                "request_text": f"Ship build {n}?", "type": "markdown", "response_type": "boolean",
                "response_config": {}, "priority": "high", "processing_type": "deferred",
                "default_response": False, "platform": "api"})["data"]["request"]["id"]
            created[rid] = began
        achieved = total / (time.monotonic() - first)
        with lock:
            deadline = time.monotonic() + 30
            while len(received) < total and time.monotonic() < deadline:
                lock.wait(timeout=1)
        latencies = sorted((received[r] - t) * 1000 for r, t in created.items() if r in received)
        if refused or len(latencies) < total:
            raise SystemExit(f"bench: {len(latencies)} of {total} pushes arrived; refused: {refused[:3]}")

        def pct(p):
            return latencies[min(len(latencies) - 1, int(len(latencies) * p))]
        print(f"create -> push received   p50 {statistics.median(latencies):7.1f} ms   p99 {pct(0.99):7.1f} ms"
              f"   (n={total}, {achieved:.0f} creates/s)")
    finally:
        server.terminate()
        server.wait()
        push.shutdown()


if __name__ == "__main__":
    main()
