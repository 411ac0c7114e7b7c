#!/usr/bin/env python3
"""A webhook receiver for reviewloop that verifies every delivery.

Run it, subscribe its URL, and watch it verify:

    WEBHOOK_SECRET=whsec_... python3 scripts/webhook_receiver.py 8000

It checks both signatures reviewloop sends, rejects what does not verify
with 401, and treats a repeated webhook-id as already handled (deliveries
are at least once). Only the Python standard library is used.
"""
import base64
import hashlib
import hmac
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

SECRET = os.environ["WEBHOOK_SECRET"]
TOLERANCE_SECONDS = 300
seen_ids = set()


def body_signature_ok(raw_body: bytes, header: str) -> bool:
    """X-ReviewLoop-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>."""
    expected = "sha256=" + hmac.new(SECRET.encode(), raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header or "")


def standard_signature_ok(raw_body: bytes, msg_id: str, timestamp: str, header: str) -> bool:
    """Standard Webhooks: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">."""
    if abs(time.time() - int(timestamp or 0)) > TOLERANCE_SECONDS:
        return False  # too old (or from the future): a replay
    key = base64.b64decode(SECRET.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + raw_body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    given = [part.split(",", 1)[1] for part in (header or "").split() if part.startswith("v1,")]
    return any(hmac.compare_digest(expected, g) for g in given)


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        ok = body_signature_ok(raw, self.headers.get("X-ReviewLoop-Signature-256")) and standard_signature_ok(
            raw,
            self.headers.get("webhook-id"),
            self.headers.get("webhook-timestamp"),
            self.headers.get("webhook-signature"),
        )
        if not ok:
            self.send_response(401)
            self.end_headers()
            print("rejected: signature does not verify", flush=True)
            return
        event = json.loads(raw)
        if event["id"] in seen_ids:
            print(f"duplicate {event['id']} ignored", flush=True)
        else:
            seen_ids.add(event["id"])
            print(f"verified {event['event']} {event['id']}", flush=True)
            print(json.dumps(event), flush=True)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
