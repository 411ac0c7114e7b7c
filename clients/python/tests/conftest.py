"""The real reviewloop binary on a fresh SQLite database, for each test
that asks for one (REVIEWLOOP_BIN names it; by default the workspace's
debug build)."""

import json
import os
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
BIN = os.environ.get("REVIEWLOOP_BIN", str(ROOT / "target" / "debug" / "reviewloop"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One instance; ``restart()`` kills it (SIGKILL) and starts another on
    the same port and database."""

    def __init__(self, env=None):
        self.dir = tempfile.mkdtemp()
        self.db = f"sqlite://{self.dir}/reviewloop.db"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "RUST_LOG": "warn", **(env or {})}
        self.lines = []
        self._start()
        self.admin_key = self._wait_for("reviewloop: bootstrap API key: ")

    def _start(self):
        self.process = subprocess.Popen(
            [BIN, "--bind", f"127.0.0.1:{self.port}", "--database-url", self.db],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, args=(self.process,), daemon=True).start()
        self._wait_for("reviewloop: listening on ")

    def _read(self, process):
        for line in process.stderr:
            self.lines.append(line.rstrip("\n"))

    def _wait_for(self, prefix, seconds=30):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if line.startswith(prefix):
                    return line[len(prefix):]
            time.sleep(0.05)
        raise AssertionError(f"no {prefix!r} from the server: {self.lines}")

    def kill(self):
        self.process.kill()
        self.process.wait()

    def relaunch(self):
        self.lines.clear()
        self._start()

    def cli(self, *args):
        out = subprocess.run([BIN, *args, "--database-url", self.db, "--json"],
                             capture_output=True, text=True, check=True, env=self.env)
        return json.loads(out.stdout)

    def key(self, email, *extra):
        return self.cli("key", "create", "--email", email, *extra)["api_key"]

    def api(self, key, method, path, body=None):
        reply = httpx.request(method, self.base + path, json=body,
                              headers={"Authorization": f"Bearer {key}"}, timeout=30)
        assert reply.status_code < 300, reply.text
        return reply.json()["data"]

    def loop_with_reviewer(self, name="Refunds"):
        """A loop of the admin's with rev@example.com as an active member:
        (loop id, reviewer's key)."""
        made = self.api(self.admin_key, "POST", "/v1/api/loops", {"name": name})
        reviewer = self.key("rev@example.com")
        self.api(reviewer, "POST", "/v1/api/loops/join", {"invite_code": made["loop"]["invite_code"]})
        return made["loop"]["id"], reviewer

    def stop(self):
        self.kill()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.stop()


class Reviewer:
    """A reviewer answering over the API, from a thread: each request that
    reaches their inbox gets ``answer`` (and ``comment``)."""

    def __init__(self, server, key, answer, comment=None, count=1):
        self.server, self.key, self.answer, self.comment = server, key, answer, comment
        self.answered = []
        self.thread = threading.Thread(target=self._run, args=(count,), daemon=True)
        self.thread.start()

    def _run(self, count):
        deadline = time.monotonic() + 60
        while len(self.answered) < count and time.monotonic() < deadline:
            try:
                inbox = self.server.api(self.key, "GET", "/v1/api/inbox")["requests"]
            except (httpx.HTTPError, AssertionError):
                time.sleep(0.2)
                continue
            for request in inbox:
                if request["id"] in self.answered:
                    continue
                body = {"response_data": self.answer}
                if self.comment:
                    body["comment"] = self.comment
                try:
                    self.server.api(self.key, "POST", f"/v1/api/requests/{request['id']}/respond", body)
                    self.answered.append(request["id"])
                except (httpx.HTTPError, AssertionError):
                    pass
            time.sleep(0.1)
