#!/usr/bin/env python3
"""Measurements of scripts/bench/run that wrk cannot make. Standard library
only. Each prints one line of `key=value` pairs for run to tabulate.

  raw-sqlite DB SECONDS            the bench's own write rate of a create's rows
  pgbench-script URL REQUEST OUT   writes a pgbench script inserting the same rows
  pgbench-read-script URL REQUEST OUT   ... and one reading a request as a GET does
  longpoll BASE KEY REVIEWER LOOP PID N   N idle long-poll waiters: CPU, wake-up p99
  sweep BACKEND DB BASE KEY LOOP PID TOTAL DUE_PER_S DUE_SECONDS   timeout lag
  webhooks BASE KEY LOOP DB RATE SECONDS   delivery rate and commit-to-delivery p99
  cycle reviewloop BASE KEY REVIEWER LOOP SECONDS CONCURRENCY
  cycle awaithumans BASE TOKEN SECONDS CONCURRENCY
                                   full cycles a second: create, a person answers, the
                                   workflow reads the answer
"""
import asyncio
import datetime
import http.client
import http.server
import json
import os
import select
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

SQLITE_PRAGMAS = (
    "PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; "
    "PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY;"
)


def new_id():
    return uuid.uuid4().hex[:24]


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def cpu_seconds(pid):
    """User plus system CPU time of a process so far, in seconds."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_ticks():
    """(busy, all) CPU ticks of the whole machine so far, every core: what
    the server, PostgreSQL and the load together used."""
    # user nice system idle iowait irq softirq steal (guest time is
    # already in user and nice); time stolen by the host is not ours.
    fields = [int(f) for f in open("/proc/stat").readline().split()[1:9]]
    total = sum(fields)
    return total - fields[3] - fields[4] - fields[7], total


def machine_busy(before):
    """The share of the machine's cores busy since `before` (machine_ticks)."""
    busy, total = machine_ticks()
    return (busy - before[0]) / max(total - before[1], 1)


def api(base, key, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Authorization": f"Bearer {key}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.load(resp)["data"]


REQUEST = {"request_text": "Publish this post?", "type": "markdown",
           "response_type": "single_select",
           "response_config": {"options": ["approve", "reject"]},
           "priority": "high", "processing_type": "deferred"}


def columns_except(conn, table, *skip):
    return ", ".join(r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] not in skip)


def raw_sqlite(db, seconds):
    """Writes copies of one created request (its row, broadcast entries,
    event and audit entry) with fresh ids, one transaction per copy, as
    fast as it can."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.executescript(SQLITE_PRAGMAS)
    template = conn.execute(
        "SELECT id FROM requests ORDER BY created_at DESC LIMIT 1").fetchone()[0]
    seq = conn.execute("SELECT seq FROM outbox_events WHERE request_id = ? LIMIT 1",
                       (template,)).fetchone()[0]
    audit = conn.execute("SELECT id FROM audit_entries WHERE request_id = ? LIMIT 1",
                         (template,)).fetchone()[0]
    request = columns_except(conn, "requests", "id")
    broadcast = columns_except(conn, "request_broadcasts", "request_id")
    event = columns_except(conn, "outbox_events", "seq", "id", "request_id", "position", "dispatched_at")
    entry = columns_except(conn, "audit_entries", "id", "request_id", "seq", "prev_hash", "hash")
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        rid = new_id()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(f"INSERT INTO requests (id, {request}) SELECT ?, {request} FROM requests WHERE id = ?",
                     (rid, template))
        conn.execute(f"INSERT INTO request_broadcasts (request_id, {broadcast}) "
                     f"SELECT ?, {broadcast} FROM request_broadcasts WHERE request_id = ?",
                     (rid, template))
        conn.execute(f"INSERT INTO outbox_events (id, request_id, {event}) "
                     f"SELECT ?, ?, {event} FROM outbox_events WHERE seq = ?", (new_id(), rid, seq))
        conn.execute(f"INSERT INTO audit_entries (request_id, {entry}) "
                     f"SELECT ?, {entry} FROM audit_entries WHERE id = ?", (rid, audit))
        conn.execute("COMMIT")
        done += 1
    print(f"rate={done / (time.perf_counter() - started):.0f}")


def pg_columns(url, table, *skip):
    names = subprocess.run(
        ["psql", url, "-Atc", "SELECT column_name FROM information_schema.columns "
         f"WHERE table_name = '{table}' ORDER BY ordinal_position"],
        check=True, capture_output=True, text=True).stdout.split()
    return ", ".join(c for c in names if c not in skip)


def pgbench_script(url, request, out):
    """A pgbench script that inserts what one create inserts (request,
    broadcast entries, event, audit entry), in one statement."""
    rest = pg_columns(url, "requests", "id")
    broadcast = pg_columns(url, "request_broadcasts", "request_id")
    event = pg_columns(url, "outbox_events", "seq", "id", "request_id", "position", "dispatched_at")
    entry = pg_columns(url, "audit_entries", "id", "request_id", "seq", "prev_hash", "hash")
    script = f"""WITH r AS (
  INSERT INTO requests (id, {rest})
  SELECT substr(md5(random()::text || clock_timestamp()::text), 1, 24), {rest}
  FROM requests WHERE id = '{request}' RETURNING id
), b AS (
  INSERT INTO request_broadcasts (request_id, {broadcast})
  SELECT r.id, {broadcast}
  FROM r, request_broadcasts WHERE request_id = '{request}'
), e AS (
  INSERT INTO outbox_events (id, request_id, {event})
  SELECT substr(md5(random()::text || clock_timestamp()::text), 1, 24), r.id, {event}
  FROM r, (SELECT * FROM outbox_events WHERE request_id = '{request}' LIMIT 1) x
)
INSERT INTO audit_entries (request_id, {entry})
SELECT r.id, {entry}
FROM r, (SELECT * FROM audit_entries WHERE request_id = '{request}' LIMIT 1) x;
"""
    open(out, "w").write(script.replace("\n", " ") + "\n")


def pgbench_read_script(url, request, out):
    """A pgbench script that reads what a GET of the request reads (its row,
    its broadcast entries as JSON, whether the viewer may see it), in the
    one statement the service runs, for its creator."""
    creator = subprocess.run(
        ["psql", url, "-Atc", f"SELECT creator_id FROM requests WHERE id = '{request}'"],
        check=True, capture_output=True, text=True).stdout.strip()
    script = f"""SELECT r.*,
  (SELECT json_agg(b ORDER BY b.position)::text
   FROM request_broadcasts b WHERE b.request_id = r.id) AS broadcasts,
  EXISTS (SELECT 1 FROM loop_members m
          WHERE m.user_id = '{creator}' AND m.status = 'active'
            AND (m.loop_id = r.loop_id OR m.loop_id = r.escalated_to)) AS viewer_active
FROM requests r WHERE r.id = '{request}';
"""
    open(out, "w").write(script.replace("\n", " ") + "\n")


async def read_answer(reader):
    """Reads one HTTP answer (head and Content-Length body); returns the body."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return await reader.readexactly(length)


def longpoll(base, key, reviewer, loop_id, pid, n):
    """N connections wait on one request; measures the server's CPU while
    nothing changes, then when each waiter's answer arrives after a
    reviewer answers. Arrivals are read with epoll in one loop, so the
    measurement is the server's pace, not the client's."""
    host, port = base.removeprefix("http://").split(":")
    request = api(base, key, "POST", f"/v1/api/loops/{loop_id}/requests", REQUEST)["request"]["id"]
    head = (f"GET /v1/api/requests/{request}?wait=60 HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {key}\r\n\r\n").encode()
    socks = []
    for i in range(n):
        sock = socket.create_connection((host, int(port)))
        sock.sendall(head)
        socks.append(sock)
        if i % 200 == 199:
            time.sleep(0.02)
    # Let the server finish every waiter's first read before measuring idle.
    time.sleep(5)
    before, t0 = cpu_seconds(pid), time.perf_counter()
    time.sleep(10)
    idle_cpu = (cpu_seconds(pid) - before) / (time.perf_counter() - t0)
    # One-shot epoll: each socket is reported once, its first bytes read
    # and timed; the rest is checked after every answer has arrived.
    poller = select.epoll(sizehint=n)
    by_fd = {}
    for sock in socks:
        sock.setblocking(False)
        by_fd[sock.fileno()] = sock
        poller.register(sock.fileno(), select.EPOLLIN | select.EPOLLONESHOT)
    answered_at = time.perf_counter()
    answer = threading.Thread(target=api, args=(base, reviewer, "POST",
                              f"/v1/api/requests/{request}/respond", {"response_data": "approve"}))
    answer.start()
    arrived, first, deadline = [], {}, time.time() + 60
    while len(arrived) < n and time.time() < deadline:
        for fd, _ in poller.poll(1, 1024):
            arrived.append(time.perf_counter())
            first[fd] = by_fd[fd].recv(65536)
    completed = 0
    for fd, data in first.items():
        sock = by_fd[fd]
        sock.setblocking(True)
        buf = bytearray(data)
        while True:
            end = buf.find(b"\r\n\r\n")
            length = 0
            for line in bytes(buf[:max(end, 0)]).split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if end >= 0 and len(buf) >= end + 4 + length:
                break
            chunk = sock.recv(65536)
            if not chunk:
                break
            buf += chunk
        completed += b"completed" in buf
    for sock in socks:
        sock.close()
    answer.join()
    delays = [(t - answered_at) * 1000 for t in arrived]
    print(f"waiters={n} idle_cpu={idle_cpu:.1%} completed={completed} "
          f"wake_p50_ms={percentile(delays, 50):.1f} wake_p99_ms={percentile(delays, 99):.1f}")


def sql(backend, db, query):
    if backend == "sqlite":
        conn = sqlite3.connect(db, isolation_level=None)
        conn.executescript(SQLITE_PRAGMAS)
        rows = conn.execute(query).fetchall()
        conn.close()
        return rows
    out = subprocess.run(["psql", db, "-qAtF", "\t", "-c", query], check=True,
                         capture_output=True, text=True).stdout
    return [tuple(line.split("\t")) for line in out.splitlines() if line]


def sweep(backend, db, base, key, loop_id, pid, total, due_per_s, due_seconds):
    """Fills the table with `total` pending requests, `due_per_s` of them
    falling due each second for `due_seconds`, the rest next year; reports
    the lag from each deadline to its timeout."""
    template = api(base, key, "POST", f"/v1/api/loops/{loop_id}/requests", REQUEST)["request"]["id"]
    due = due_per_s * due_seconds
    lead = 45  # seconds to insert everything before the first deadline
    start = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) + datetime.timedelta(seconds=lead)
    step_us = 1_000_000 // due_per_s
    t_insert = time.perf_counter()
    if backend == "sqlite":
        columns = [r[1] for r in sqlite3.connect(db).execute("PRAGMA table_info(requests)")]
        rest = [c for c in columns if c not in ("id", "timeout_at")]
        cols = ", ".join(rest)
        query = f"""WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {total - 1})
            INSERT INTO requests (id, timeout_at, {cols})
            SELECT printf('%024x', 1000000000 + i),
                   CASE WHEN i < {due}
                        THEN strftime('%Y-%m-%d %H:%M:%f', '{start:%Y-%m-%d %H:%M:%S}', '+' || (i * {step_us} / 1000000.0) || ' seconds')
                        ELSE strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 year') END,
                   {cols}
            FROM n, (SELECT * FROM requests WHERE id = '{template}')"""
        conn = sqlite3.connect(db, isolation_level=None)
        conn.executescript(SQLITE_PRAGMAS)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(query)
        conn.execute("COMMIT")
        conn.close()
    else:
        columns = [r[0] for r in sql(backend, db, "SELECT column_name FROM information_schema.columns "
                                                  "WHERE table_name = 'requests' ORDER BY ordinal_position")]
        rest = [c for c in columns if c not in ("id", "timeout_at")]
        cols = ", ".join(rest)
        sql(backend, db, f"""INSERT INTO requests (id, timeout_at, {cols})
            SELECT lpad(to_hex(1000000000 + i), 24, '0'),
                   CASE WHEN i < {due}
                        THEN '{start:%Y-%m-%d %H:%M:%S}'::timestamp + (i * {step_us}) * interval '1 microsecond'
                        ELSE (now() at time zone 'utc') + interval '1 year' END,
                   {cols}
            FROM generate_series(0, {total - 1}) AS i, (SELECT * FROM requests WHERE id = '{template}') t""")
        # A table that grew to this size over time would have statistics
        # (autovacuum analyzes it as it grows); one filled in a second has
        # none, and the planner then scans it for every partial-index query.
        sql(backend, db, "ANALYZE requests")
    inserted_in = time.perf_counter() - t_insert
    if inserted_in > lead - 5:
        print(f"error=inserting took {inserted_in:.0f}s, longer than the lead of {lead}s")
        return
    wait = (start - datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)).total_seconds()
    # CPU from the first deadline on: the lead before it is idle.
    time.sleep(max(0, wait))
    cpu_before, machine_before = cpu_seconds(pid), machine_ticks()
    time.sleep(due_seconds + 5)
    cpu = (cpu_seconds(pid) - cpu_before) / (due_seconds + 5)
    if backend == "sqlite":
        lags = [r[0] for r in sql(backend, db, "SELECT (julianday(response_at) - julianday(timeout_at)) * 86400 "
                                              "FROM requests WHERE status = 'timeout'")]
    else:
        lags = [float(r[0]) for r in sql(backend, db, "SELECT extract(epoch FROM response_at - timeout_at) "
                                                     "FROM requests WHERE status = 'timeout'")]
    print(f"pending={total} due={due} timed_out={len(lags)} lag_p50_s={percentile(lags, 50):.2f} "
          f"lag_p99_s={percentile(lags, 99):.2f} lag_max_s={max(lags, default=float('nan')):.2f} "
          f"server_cpu={cpu:.0%} machine_busy={machine_busy(machine_before):.0%} insert_s={inserted_in:.0f}")


class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    received = []

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Receiver.received.append(time.time())
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def webhooks(base, key, loop_id, db, rate, seconds):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    created_hook = api(base, key, "POST", "/v1/api/webhooks", {"url": url, "events": ["request.created"]})
    hook = (created_hook.get("webhook") or created_hook)["id"]
    host, port = base.removeprefix("http://").split(":")
    body = json.dumps(REQUEST).encode()
    connections = 8
    per_connection = rate / connections

    async def paced():
        reader, writer = await asyncio.open_connection(host, int(port))
        head = (f"POST /v1/api/loops/{loop_id}/requests HTTP/1.1\r\nHost: {host}\r\n"
                f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        sent, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            target = int((time.perf_counter() - t0) * per_connection)
            while sent < target:
                writer.write(head)
                await writer.drain()
                await read_answer(reader)
                sent += 1
            await asyncio.sleep(0.002)
        return sent

    async def many():
        counts = await asyncio.gather(*[paced() for _ in range(connections)])
        return sum(counts)

    machine_before = machine_ticks()
    created = asyncio.run(many())
    deadline = time.time() + 60
    while len(Receiver.received) < created and time.time() < deadline:
        time.sleep(0.2)
    busy = machine_busy(machine_before)
    # Commit to delivery, from the service's own records: (commit, delivery)
    # in seconds of some epoch per delivered event.
    if db.startswith("postgres"):
        times = [(float(c), float(d)) for c, d in sql("postgres", db,
                 "SELECT extract(epoch FROM e.created_at), extract(epoch FROM d.last_attempt_at) FROM deliveries d "
                 f"JOIN outbox_events e ON e.id = d.event_id WHERE d.status = 'succeeded' AND d.webhook_id = '{hook}'")]
    else:
        times = [(c * 86400, d * 86400) for c, d in sql("sqlite", db,
                 "SELECT julianday(e.created_at), julianday(d.last_attempt_at) FROM deliveries d "
                 f"JOIN outbox_events e ON e.id = d.event_id WHERE d.status = 'succeeded' AND d.webhook_id = '{hook}'")]
    delays = [(d - c) * 1000 for c, d in times]
    span = max(d for _, d in times) - min(d for _, d in times) if times else 0
    # The backlog left when the creates stopped, and how fast it drained
    # once the core was the deliveries' alone.
    last_commit = max((c for c, _ in times), default=0)
    after = [d for _, d in times if d > last_commit]
    drain = f"backlog_at_end={len(after)} drain_per_s={len(after) / max(max(after) - last_commit, 0.001):.0f} " if len(after) >= 100 else f"backlog_at_end={len(after)} "
    print(f"offered_per_s={rate:.0f} created={created} delivered={len(Receiver.received)} "
          f"deliveries_per_s={len(delays) / max(float(span or 0), 0.001):.0f} {drain}"
          f"commit_to_delivery_p50_ms={percentile(delays, 50):.0f} "
          f"commit_to_delivery_p99_ms={percentile(delays, 99):.0f} machine_busy={busy:.0%}", end="")
    try:
        api(base, key, "DELETE", f"/v1/api/webhooks/{hook}")
        print()
    except urllib.error.HTTPError as e:
        # A failed clean-up is a finding, not a reason to lose the run.
        print(f" DELETE_webhook=HTTP_{e.code}")
    server.shutdown()


class Calls:
    """One keep-alive connection's JSON calls."""

    def __init__(self, base):
        host, port = base.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)

    def call(self, method, path, token, body=None):
        headers = {"Authorization": f"Bearer {token}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        text = resp.read()
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: {resp.status} {text[:200]!r}")
        return json.loads(text)


def reviewloop_cycle(base, key, reviewer, loop_id):
    def one(calls, n):
        made = calls.call("POST", f"/v1/api/loops/{loop_id}/requests", key, REQUEST)
        rid = made["data"]["request"]["id"]
        calls.call("POST", f"/v1/api/requests/{rid}/respond", reviewer, {"response_data": "approve"})
        got = calls.call("GET", f"/v1/api/requests/{rid}", key)
        assert got["data"]["request"]["response_data"] == "approve", got
    return one


def awaithumans_cycle(base, token):
    prefix = uuid.uuid4().hex[:8]

    def one(calls, n):
        made = calls.call("POST", "/api/tasks", token, {
            "task": "Publish this post?", "payload": {"post": "Publish this post?"},
            "payload_schema": {"type": "object"},
            "response_schema": {"type": "object", "properties": {"decision": {"type": "string"}}},
            "timeout_seconds": 3600, "idempotency_key": f"cycle-{prefix}-{n}"})
        tid = made["id"]
        calls.call("POST", f"/api/tasks/{tid}/complete", token,
                   {"response": {"decision": "approve"}, "completed_by_email": "op@example.com"})
        got = calls.call("GET", f"/api/tasks/{tid}", token)
        assert got["response"] == {"decision": "approve"}, got
    return one


def cycle(base, one, seconds, concurrency):
    """CONCURRENCY workers, each on its own connection, run full cycles for
    SECONDS; prints cycles a second and the cycle's p50 and p99."""
    took, errors, counter = [], [], iter(range(10**9))
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def worker():
        calls = Calls(base)
        while time.monotonic() < end:
            with lock:
                n = next(counter)
            start = time.monotonic()
            try:
                one(calls, n)
            except Exception as e:  # the run goes on; the count says so
                with lock:
                    errors.append(str(e))
                calls = Calls(base)
                continue
            with lock:
                took.append(time.monotonic() - start)

    started = time.monotonic()
    workers = [threading.Thread(target=worker) for _ in range(concurrency)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    span = time.monotonic() - started
    print(f"cycles_per_s={len(took) / span:.0f} p50_ms={percentile(took, 50) * 1000:.1f} "
          f"p99_ms={percentile(took, 99) * 1000:.1f} errors={len(errors)}"
          + (f" first_error={errors[0][:120]!r}" if errors else ""))


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "raw-sqlite":
        raw_sqlite(args[0], float(args[1]))
    elif command == "pgbench-script":
        pgbench_script(*args)
    elif command == "pgbench-read-script":
        pgbench_read_script(*args)
    elif command == "longpoll":
        longpoll(args[0], args[1], args[2], args[3], int(args[4]), int(args[5]))
    elif command == "sweep":
        sweep(args[0], args[1], args[2], args[3], args[4], int(args[5]), int(args[6]), int(args[7]), int(args[8]))
    elif command == "cycle" and args[0] == "reviewloop":
        base, key, reviewer, loop_id, seconds, concurrency = args[1:]
        cycle(base, reviewloop_cycle(base, key, reviewer, loop_id), float(seconds), int(concurrency))
    elif command == "cycle" and args[0] == "awaithumans":
        base, token, seconds, concurrency = args[1:]
        cycle(base, awaithumans_cycle(base, token), float(seconds), int(concurrency))
    elif command == "webhooks":
        webhooks(args[0], args[1], args[2], args[3], float(args[4]), float(args[5]))
    else:
        sys.exit(f"unknown scenario {command}")


if __name__ == "__main__":
    main()
