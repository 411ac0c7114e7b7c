"""Verifies one delivery with the official Standard Webhooks library.

Reads the secret from WEBHOOK_SECRET, the headers as JSON from
WEBHOOK_HEADERS and the raw body from stdin; exits 0 when the library
accepts it, 1 (with its complaint) when it does not.
"""
import json
import os
import sys

from standardwebhooks.webhooks import Webhook

body = sys.stdin.buffer.read()
try:
    Webhook(os.environ["WEBHOOK_SECRET"]).verify(body, json.loads(os.environ["WEBHOOK_HEADERS"]))
except Exception as error:  # the library's own verification error
    print(f"refused: {error!r}", file=sys.stderr)
    sys.exit(1)
print("verified")
