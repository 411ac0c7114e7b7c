"""Reads one Web Push as a browser would, with libraries independent of
the server's: checks the VAPID JWT of its Authorization header with
`cryptography` (ES256 by the key in `k`, `aud` the push service's origin,
`exp` within a day) and decrypts the body with Mozilla's `http_ece`
(RFC 8291 aes128gcm) using the device's private key and auth secret.

Reads JSON from stdin: `body`, `secret_key` (the device's 32-byte scalar),
`auth` (all base64url), `authorization`, `origin`. Prints the plaintext;
exits 1 with the reason when something does not hold.
"""
import base64
import json
import sys
import time

import http_ece
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


push = json.load(sys.stdin)
try:
    fields = dict(p.strip().split("=", 1) for p in push["authorization"][len("vapid "):].split(","))
    head, claims, signature = fields["t"].split(".")
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(fields["k"]))
    raw = unb64url(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    key.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    if json.loads(unb64url(head)).get("alg") != "ES256":
        raise ValueError("alg is not ES256")
    claims = json.loads(unb64url(claims))
    if claims["aud"] != push["origin"]:
        raise ValueError(f"aud {claims['aud']} is not {push['origin']}")
    if not time.time() < claims["exp"] <= time.time() + 86400:
        raise ValueError(f"exp {claims['exp']} is not within a day")
    device = ec.derive_private_key(int.from_bytes(unb64url(push["secret_key"]), "big"), ec.SECP256R1())
    plain = http_ece.decrypt(unb64url(push["body"]), private_key=device,
                             auth_secret=unb64url(push["auth"]), version="aes128gcm")
except Exception as error:  # any failure is the answer
    print(f"refused: {error!r}", file=sys.stderr)
    sys.exit(1)
sys.stdout.write(plain.decode())
