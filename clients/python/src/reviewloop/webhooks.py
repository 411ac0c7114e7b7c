"""Checking that a webhook delivery or a request's callback came from
reviewloop. Both carry two signatures of the raw body:

- Standard Webhooks: ``webhook-id``, ``webhook-timestamp`` and
  ``webhook-signature`` (``v1,`` + base64 HMAC-SHA256 of
  ``{id}.{timestamp}.{body}``, keyed with the base64-decoded part of a
  ``whsec_`` secret), which also proves when it was sent;
- ``X-ReviewLoop-Signature-256`` (and ``X-HITL-Signature-256``):
  ``sha256=`` + hex HMAC-SHA256 of the body, keyed with the secret's text.

A webhook is signed with its subscription's secret, a callback with the
account's signing secret.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union

from .errors import ReviewLoopError

#: How far a Standard Webhooks timestamp may be from now (seconds).
TOLERANCE_SECONDS = 300


class WebhookVerificationError(ReviewLoopError):
    """The body was not signed with this secret, or too long ago."""


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def _standard_key(secret: str) -> bytes:
    """The key the server signs with: the bytes of a ``whsec_`` secret's
    base64 when it is canonical base64, else the secret's text."""
    if secret.startswith("whsec_"):
        encoded = secret[len("whsec_"):]
        try:
            decoded = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            decoded = None
        if decoded is not None and base64.b64encode(decoded).decode() == encoded:
            return decoded
    return secret.encode()


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def verify(body: Union[bytes, str], headers: Mapping[str, str], secret: str, *,
           tolerance: int = TOLERANCE_SECONDS, now: Optional[float] = None,
           allow_body_signature: bool = False) -> Any:
    """Returns the delivery's JSON once its signature holds; raises
    :class:`WebhookVerificationError` otherwise. Pass the body exactly as
    received: parsing and re-serializing it changes the bytes.

    The Standard Webhooks signature must hold and its timestamp be within
    ``tolerance`` seconds, so a captured delivery cannot be replayed later
    (use ``webhook-id`` to drop duplicates). With
    ``allow_body_signature=True``, a delivery without those headers (from a
    proxy that drops them) is accepted on ``X-ReviewLoop-Signature-256``
    (or ``X-HITL-Signature-256``) alone, which proves the body but not
    when it was sent."""
    raw = body.encode() if isinstance(body, str) else bytes(body)
    msg_id = _header(headers, "webhook-id")
    stamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if msg_id and stamp and signatures:
        try:
            sent = int(stamp)
        except ValueError:
            raise WebhookVerificationError("webhook-timestamp is not a number") from None
        if abs((time.time() if now is None else now) - sent) > tolerance:
            raise WebhookVerificationError("webhook-timestamp is too far from now (a replay?)")
        mac = hmac.new(_standard_key(secret), f"{msg_id}.{stamp}.".encode() + raw, hashlib.sha256)
        expected = base64.b64encode(mac.digest()).decode()
        given = [part.split(",", 1)[1] for part in signatures.split() if part.startswith("v1,")]
        if not any(_same(expected, g) for g in given):
            raise WebhookVerificationError("webhook-signature does not match this secret")
    elif not allow_body_signature:
        raise WebhookVerificationError(
            "the delivery has no webhook-id, webhook-timestamp and webhook-signature headers")
    else:
        header = _header(headers, "x-reviewloop-signature-256") or _header(headers, "x-hitl-signature-256")
        if not header:
            raise WebhookVerificationError("the delivery carries no signature")
        expected = "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
        if not _same(expected, header.strip()):
            raise WebhookVerificationError("X-ReviewLoop-Signature-256 does not match this secret")
    try:
        return json.loads(raw)
    except ValueError:
        raise WebhookVerificationError("the body is not JSON") from None
