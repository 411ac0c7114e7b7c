#!/usr/bin/env python3
"""A black-box fuzzer over every route of a running reviewloop.

    scripts/fuzz [CASES] [SEED]      (builds and starts a throwaway server)

Sends CASES random requests (default 5000) from a fixed SEED (default 1):
random methods on every route with real, foreign, malformed and missing ids,
JSON bodies whose fields are every type and hostile text (NUL and other
control characters, huge strings, deep nesting, odd numbers), odd query
strings and headers, from two accounts. It checks what any answer must be:
never a 5xx, always JSON in the envelope of its surface (except the QR PNG,
the join page and the event stream), and one account never reads another's
request. Prints a tally and every violation with the request that caused it;
exits non-zero if there was one. Standard library only.
"""

import json
import random
import sys
import urllib.error
import urllib.request

BASE, ADMIN, OTHER = sys.argv[1], sys.argv[2], sys.argv[3]
CASES = int(sys.argv[4]) if len(sys.argv) > 4 else 5000
rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 1)

HOSTILE = [
    "", " ", "a\u0000b", "\u0000", "\u001b[31mred", "\r\n\r\nX: y", "<script>alert(1)</script>",
    "' OR 1=1 --", "\ud7ff\ue000\uffff", "🔁" * 50, "x" * 3000, "é" * 600, "null", "../../etc/passwd",
    "%00", "\\u0000", "approve", "reject", "text", "single_select", "markdown", "image", "high",
    "time-sensitive", "deferred", "https://example.com/a.png", "http://127.0.0.1:1/", "a@b.co",
    "not-an-email", "000000000000000000000000", "ffffffffffffffffffffffff", "ABCDEF", "*",
]
NUMBERS = [0, -1, 1, 2, 5, 3600, 2592000, 2592001, 2**31, 2**63 - 1, -(2**63), 1.5, 1e308, -0.0]


def value(depth=0):
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice(HOSTILE)
    if kind == 1:
        return rng.choice(NUMBERS)
    if kind == 2:
        return rng.choice([True, False, None])
    if kind == 3:
        return "".join(chr(rng.randrange(0, 0x3000)) for _ in range(rng.randrange(0, 20))).replace(
            "\ud800", "")
    if kind == 4:
        return rng.choice(HOSTILE + [""] * 3)
    if kind == 5:
        return [value(depth + 1) for _ in range(rng.randrange(0, 5))]
    if kind == 6:
        return {rng.choice(FIELDS + HOSTILE[:6]): value(depth + 1) for _ in range(rng.randrange(0, 5))}
    nested = []
    for _ in range(rng.randrange(1, 200)):
        nested = [nested]
    return nested


FIELDS = [
    "name", "description", "icon", "email", "invite_code", "request_text", "type", "image_url",
    "response_type", "response_config", "priority", "processing_type", "timeout_seconds",
    "default_response", "context", "platform", "platform_version", "callback_url", "metadata",
    "loop_id", "response_data", "rating", "comment", "feedback", "url", "events", "secret",
    "active", "dialect", "options", "scale_min", "scale_max", "max_length", "min", "max",
    "fields", "template_id", "content", "assignees", "team_id", "due_date", "result", "label",
    "required", "editable",
]

VALID_REQUEST = {
    "request_text": "Publish?", "type": "markdown", "response_type": "single_select",
    "response_config": {"options": ["approve", "reject"]}, "priority": "high",
    "processing_type": "time-sensitive", "timeout_seconds": 3600, "default_response": "reject",
}


VALID_TEMPLATE = {
    "name": "Fuzz form", "fields": [
        {"name": "post", "type": "content_display"},
        {"name": "ok", "type": "boolean", "required": True},
        {"name": "tone", "type": "single_select", "options": ["calm", "sharp"]},
        {"name": "reply", "type": "text", "editable": True, "max_length": 100},
    ],
}


def valid_review():
    return {"template_id": TEMPLATE_ID, "content": {"text": "Post", "metadata": {"reply": "Hi"}},
            "assignees": ["third@example.com"], "priority": "low"}


def body():
    roll = rng.random()
    if roll < 0.3:
        mutated = dict(rng.choice([VALID_REQUEST, VALID_TEMPLATE, valid_review(),
                                   {"result": {"ok": True, "tone": "calm"}}]))
        for _ in range(rng.randrange(1, 4)):
            mutated[rng.choice(FIELDS)] = value()
        return json.dumps(mutated).encode()
    if roll < 0.8:
        return json.dumps({rng.choice(FIELDS): value() for _ in range(rng.randrange(0, 8))}).encode()
    if roll < 0.9:
        return json.dumps(value()).encode()
    return rng.choice([b"{", b"[1,2", b"\xff\xfe", b"{\"a\": 1,}", b"nul", b"{\"a\":\"\\ud800\"}", b""])


def call(method, path, key, data=None, headers=None):
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if key:
        request.add_header("Authorization", "Bearer " + key)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for name, val in (headers or {}).items():
        request.add_header(name, val)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def create(path, payload):
    status, _, raw = call("POST", path, ADMIN, json.dumps(payload).encode())
    assert status == 201, (path, status, raw)
    return json.loads(raw)["data"]


loop = create("/v1/api/loops", {"name": "Fuzz"})
LOOP_ID, CODE = loop["loop"]["id"], loop["invite_code"]
REQUEST_ID = create(f"/v1/api/loops/{LOOP_ID}/requests", VALID_REQUEST)["request"]["id"]
status, _, raw = call("POST", "/v1/api/webhooks", ADMIN,
                      json.dumps({"url": "https://hooks.example.com/x", "events": ["*"]}).encode())
WEBHOOK_ID = json.loads(raw)["data"]["webhook"]["id"] if status == 201 else "0" * 24
OTHER_LOOP = json.loads(call("POST", "/v1/api/loops", OTHER, b'{"name": "Other"}')[2])["data"]["loop"]["id"]
TEMPLATE_ID = create("/v1/templates", VALID_TEMPLATE)["id"]
REVIEW_ID = create("/v1/reviews", valid_review())["id"]
TEAM_ID = create("/v1/teams", {"name": "Fuzz team"})["id"]
# The admin's own: the other account must never read them.
PRIVATE = [REQUEST_ID, TEMPLATE_ID, REVIEW_ID]

IDS = [LOOP_ID, REQUEST_ID, WEBHOOK_ID, OTHER_LOOP, TEMPLATE_ID, REVIEW_ID, TEAM_ID, "0" * 24, "zz", "1" * 25, "%00", "..", "", "a" * 300]
ROUTES = [
    ("GET", "/v1/test"), ("GET", "/loops"), ("POST", "/loops"), ("GET", "/loops/{id}"),
    ("PUT", "/loops/{id}"), ("DELETE", "/loops/{id}"), ("GET", "/loops/{id}/members"),
    ("POST", "/loops/{id}/members"), ("DELETE", "/loops/{id}/members/{id}"),
    ("POST", "/loops/{id}/invite-code"), ("POST", "/loops/join"), ("GET", "/loops/{id}/requests"),
    ("POST", "/loops/{id}/requests"), ("GET", "/requests"), ("POST", "/requests"),
    ("GET", "/requests/{id}"), ("PATCH", "/requests/{id}"), ("DELETE", "/requests/{id}"),
    ("POST", "/requests/{id}/feedback"), ("POST", "/requests/{id}/claim"),
    ("POST", "/requests/{id}/release"), ("POST", "/requests/{id}/respond"), ("GET", "/inbox"),
    ("GET", "/webhooks"), ("POST", "/webhooks"), ("GET", "/webhooks/{id}"),
    ("PATCH", "/webhooks/{id}"), ("DELETE", "/webhooks/{id}"), ("GET", "/webhooks/{id}/deliveries"),
    ("POST", "/webhooks/{id}/deliveries/{id}/redeliver"), ("GET", "/account/signing-secret"),
    ("POST", "/account/signing-secret/rotate"), ("GET", "/nowhere"), ("OPTIONS", "/loops"),
    ("GET", "/templates"), ("POST", "/templates"), ("GET", "/templates/{id}"),
    ("PATCH", "/templates/{id}"), ("DELETE", "/templates/{id}"), ("GET", "/reviews"),
    ("POST", "/reviews"), ("GET", "/reviews/{id}"), ("PATCH", "/reviews/{id}"),
    ("DELETE", "/reviews/{id}"), ("POST", "/reviews/{id}/start"), ("POST", "/reviews/{id}/complete"),
    ("GET", "/teams"), ("POST", "/teams"), ("GET", "/teams/{id}"), ("GET", "/teams/{id}/members"),
    ("POST", "/teams/{id}/members"),
]
PUBLIC = [("GET", "/join/{code}"), ("GET", "/v1/qr/{code}.png"), ("GET", "/health")]
QUERIES = ["", "?limit=0", "?limit=-1", "?limit=99999999999999999999", "?offset=abc", "?status=%00",
           "?status=pending&priority=high&sort=priority_desc", "?wait=1", "?wait=nan", "?force=true",
           "?loop_id=zz", "?sort=%27", "?limit=2&offset=1", "?role=reviewer", "?overdue=true",
           "?overdue=maybe", "?assignee=a%40b.co", "?template_id=zz", "?team_id=%00"]

tally, violations = {}, []
for case in range(CASES):
    if rng.random() < 0.05:
        method, template = rng.choice(PUBLIC)
        path = template.replace("{code}", rng.choice([CODE, "AAAAAA", "%00", "x" * 100, ""]))
        key = None
    else:
        method, template = rng.choice(ROUTES)
        path = rng.choice(["/v1/api", "/v1"]) + template
        while "{id}" in path:
            path = path.replace("{id}", rng.choice(IDS), 1)
        path += rng.choice(QUERIES)
        key = rng.choice([ADMIN] * 6 + [OTHER] * 3 + [None, "rl_bogus", "\u00e9"])
    data = body() if method in ("POST", "PUT", "PATCH") and rng.random() < 0.95 else None
    headers = {}
    if rng.random() < 0.1:
        headers["Idempotency-Key"] = rng.choice(["k1", "k" * 300, "é", " "])
    if rng.random() < 0.05:
        headers["Last-Event-ID"] = rng.choice(["-1", "x", "99999999999999999999"])
    if "events" in path:
        continue  # an endless stream; tests/listening.rs covers it
    try:
        key_header = key.encode("latin-1").decode("latin-1") if key else None
        status, answer_headers, raw = call(method, path, key_header, data, headers)
    except (UnicodeEncodeError, ValueError):
        continue
    except Exception as error:  # the connection itself failed
        violations.append((case, method, path, data, f"no answer: {error}"))
        continue
    tally[status] = tally.get(status, 0) + 1
    content_type = answer_headers.get("Content-Type", "")
    problem = None
    if status >= 500:
        problem = f"server error {status}: {raw[:300]!r}"
    elif "image/png" in content_type or "text/html" in content_type:
        pass
    else:
        try:
            envelope = json.loads(raw)
            if not (("error" in envelope and "msg" in envelope) or "success" in envelope):
                problem = f"not an envelope: {raw[:200]!r}"
            elif key == OTHER and status == 200 and any(p in path for p in PRIVATE):
                problem = "another account read the admin's request, template or review"
        except ValueError:
            problem = f"not JSON ({status}, {content_type}): {raw[:200]!r}"
    if problem:
        violations.append((case, method, path, data[:200] if data else None, problem))

print(f"{CASES} cases; statuses: " + ", ".join(f"{s}: {n}" for s, n in sorted(tally.items())))
for violation in violations[:30]:
    print("VIOLATION", violation)
print(f"{len(violations)} violations")
sys.exit(1 if violations else 0)
