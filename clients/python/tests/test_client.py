"""The Python client against the real binary: every operation, the
decorator's approve, reject and timeout paths with a reviewer answering
over the API, a restart during ``wait``, a bad key, a rate-limited key,
test mode, and the signature of a real delivery."""

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

import reviewloop
from reviewloop import webhooks
from conftest import Reviewer, Server


def test_every_request_side_operation(server):
    loop_id, _ = server.loop_with_reviewer()
    with reviewloop.Client(server.base, server.admin_key) as client:
        loops = client.list_loops()
        assert [lp.id for lp in loops] == [loop_id]
        assert client.get_loop(loop_id).name == "Refunds"

        made = client.create_request(loop_id, request_text="Refund order #1042?", priority="high",
                                     context={"order": 1042}, idempotency_key="refund-1042")
        assert (made.status, made.priority, made.response_type) == ("pending", "high", "boolean")
        again = client.create_request(loop_id, request_text="Refund order #1042?", priority="high",
                                      context={"order": 1042}, idempotency_key="refund-1042")
        assert again.id == made.id, "a retried create never asks twice"
        assert client.get_request(made.id).context == {"order": 1042}

        changed = client.update_request(made.id, priority="critical")
        assert changed.priority == "critical"

        for n in range(3):
            client.create_request(loop_id, request_text=f"Question {n}?", response_type="text")
        page = client.list_requests(limit=2)
        assert (len(page.requests), page.total, page.next_offset) == (2, 4, 2)
        assert len(list(client.iter_requests(limit=2))) == 4
        assert [r.id for r in client.list_requests(priority="critical").requests] == [made.id]

        cancelled = client.cancel_request(made.id)
        assert cancelled["status"] == "cancelled"
        ended = client.wait(made.id, timeout=5)
        assert ended.status == "cancelled" and ended.ended

        with pytest.raises(reviewloop.ReviewLoopError) as again_cancelled:
            client.cancel_request(made.id)
        assert again_cancelled.value.status in (400, 409)
        with pytest.raises(reviewloop.NotFoundError):
            client.get_request("5f5e1000ab010203040506ff")
        with pytest.raises(reviewloop.ValidationError) as refused:
            client.create_request(loop_id, request_text="")
        assert "request_text" in refused.value.message


def test_repeated_questions_join_the_open_one_and_end_with_it(server):
    loop_id, reviewer_key = server.loop_with_reviewer()
    with reviewloop.Client(server.base, server.admin_key) as client:
        first = client.create_request(loop_id, request_text="Deploy 4711?", coalesce_key="deploy-4711")
        again = client.create_request(loop_id, request_text="Deploy 4711?", coalesce_key="deploy-4711")
        assert first.coalesced_into is None
        assert again.coalesced_into == first.id and again.reused_from is None
        reviewer = Reviewer(server, reviewer_key, True)
        ended = client.wait(again.id, timeout=30)
        reviewer.thread.join(30)
        assert reviewer.answered == [first.id], "the reviewer was asked once"
        assert (ended.status, ended.response_data) == ("completed", True)


def test_an_approved_call_runs_and_carries_its_arguments(server):
    loop_id, reviewer_key = server.loop_with_reviewer()
    client = reviewloop.Client(server.base, server.admin_key)
    ran = []

    @client.require_approval(loop_id, priority="high")
    def refund(order_id: str, amount: float, note=object()) -> str:
        ran.append((order_id, amount))
        return "refunded"

    reviewer = Reviewer(server, reviewer_key, True, comment="fine by me")
    assert refund("A-1", 12.5) == "refunded"
    assert ran == [("A-1", 12.5)]
    # The call may return before the reviewer's thread noted what it answered.
    reviewer.thread.join(30)
    asked = client.get_request(reviewer.answered[0])
    assert asked.context["function"].endswith("refund")
    assert asked.context["arguments"]["order_id"] == "A-1"
    assert asked.context["arguments"]["amount"] == 12.5
    assert asked.context["arguments"]["note"].startswith("<object object"), "shown as text"
    assert "refund" in asked.request_text and asked.priority == "high"
    assert asked.response_comment == "fine by me"
    rated = client.add_feedback(asked.id, rating=5, comment="quick and right")
    assert (rated["rating"], rated["comment"]) == (5, "quick and right")


def test_a_rejected_call_does_not_run_and_says_why(server):
    loop_id, reviewer_key = server.loop_with_reviewer()
    client = reviewloop.Client(server.base, server.admin_key)
    ran = []

    @client.require_approval(loop_id)
    def delete_everything() -> None:
        ran.append(True)

    Reviewer(server, reviewer_key, False, comment="Not on a Friday")
    with pytest.raises(reviewloop.Rejected) as refused:
        delete_everything()
    assert ran == []
    assert (refused.value.reason, refused.value.comment) == ("rejected", "Not on a Friday")


def test_a_call_nobody_answers_times_out_on_its_false_default(server):
    loop_id, _ = server.loop_with_reviewer()
    client = reviewloop.Client(server.base, server.admin_key)

    @client.require_approval(loop_id, timeout_seconds=1)
    def deploy() -> None:
        raise AssertionError("must not run")

    with pytest.raises(reviewloop.Rejected) as refused:
        deploy()
    assert refused.value.reason == "timeout"
    assert refused.value.request.response_data is False


def test_the_async_client_guards_coroutines_and_asks_humans(server):
    loop_id, reviewer_key = server.loop_with_reviewer()

    async def scenario():
        async with reviewloop.AsyncClient(server.base, server.admin_key) as client:
            @client.require_approval(loop_id)
            async def send(to: str) -> str:
                return f"sent to {to}"

            Reviewer(server, reviewer_key, True)
            assert await send("ops@example.com") == "sent to ops@example.com"

            Reviewer(server, reviewer_key, "Use the EU region")
            ask = client.human_as_tool(loop_id)
            assert await ask("Which region?") == "Use the EU region"
            with pytest.raises(TypeError):
                client.require_approval(loop_id)(lambda: None)

    asyncio.run(scenario())


def test_the_sync_client_asks_humans_and_guards_coroutines(server):
    loop_id, reviewer_key = server.loop_with_reviewer()
    client = reviewloop.Client(server.base, server.admin_key)
    Reviewer(server, reviewer_key, "42")
    assert client.human_as_tool(loop_id)("What is the answer?") == "42"

    @client.require_approval(loop_id)
    async def launch() -> str:
        return "launched"

    Reviewer(server, reviewer_key, True)
    assert asyncio.run(launch()) == "launched"


def test_wait_gives_up_at_its_timeout_with_the_request_as_it_stands(server):
    loop_id, _ = server.loop_with_reviewer()
    client = reviewloop.Client(server.base, server.admin_key)
    made = client.create_request(loop_id, request_text="Anyone?")
    started = time.monotonic()
    with pytest.raises(reviewloop.WaitTimeout) as gave_up:
        client.wait(made.id, timeout=2)
    assert 1.5 < time.monotonic() - started < 10
    assert gave_up.value.request.status == "pending"


def test_wait_rides_out_a_server_restart(server):
    loop_id, reviewer_key = server.loop_with_reviewer()
    client = reviewloop.Client(server.base, server.admin_key)
    made = client.create_request(loop_id, request_text="Still there?")
    result = {}
    waiting = threading.Thread(target=lambda: result.update(r=client.wait(made.id, timeout=60)))
    waiting.start()
    time.sleep(1)
    server.kill()
    time.sleep(1.5)
    server.relaunch()
    Reviewer(server, reviewer_key, True)
    waiting.join(60)
    assert result["r"].status == "completed" and result["r"].response_data is True


def test_a_bad_key_and_a_rate_limited_key_are_told_apart(server):
    with pytest.raises(reviewloop.AuthenticationError) as bad:
        reviewloop.Client(server.base, "rl_not_a_key").list_loops()
    assert bad.value.status == 401
    tight = server.key("tight@example.com", "--rate-limit", "2")
    client = reviewloop.Client(server.base, tight, max_retries=0)
    client.list_loops()
    client.list_loops()
    with pytest.raises(reviewloop.RateLimitError) as limited:
        client.list_loops()
    assert limited.value.status == 429 and limited.value.retry_after > 0


def test_test_mode_runs_approval_paths_without_people(server):
    loop_id, _ = server.loop_with_reviewer()
    test_key = server.key("admin@localhost", "--test")
    client = reviewloop.Client(server.base, test_key)
    made = client.create_request(loop_id, request_text="Approve?", test_response=True)
    assert client.wait(made.id, timeout=10).response_data is True

    later = client.create_request(loop_id, request_text="Approve later?", timeout_seconds=3600)
    before = client.test_clock().offset_seconds
    moved = client.advance_clock(3601)
    assert moved.offset_seconds >= before + 3601 and moved.timed_out == 1
    ended = client.wait(later.id, timeout=10)
    assert ended.status == "timeout" and ended.test


class _Receiver(BaseHTTPRequestHandler):
    got = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        _Receiver.got.append((dict(self.headers), body))
        self.send_response(200)
        self.end_headers()


def test_a_real_delivery_verifies_and_a_changed_byte_does_not():
    server = Server(env={"REVIEWLOOP_ALLOW_PRIVATE_TARGETS": "true"})
    try:
        receiver = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
        threading.Thread(target=receiver.serve_forever, daemon=True).start()
        hook = server.api(server.admin_key, "POST", "/v1/api/webhooks",
                          {"url": f"http://127.0.0.1:{receiver.server_port}/hook", "events": ["request.created"]})
        secret = hook["webhook"]["secret"]
        loop_id, _ = server.loop_with_reviewer()
        reviewloop.Client(server.base, server.admin_key).create_request(loop_id, request_text="Signed?")
        deadline = time.monotonic() + 20
        while not _Receiver.got and time.monotonic() < deadline:
            time.sleep(0.1)
        headers, body = _Receiver.got[0]
        event = webhooks.verify(body, headers, secret)
        assert event["event"] == "request.created"
        # The body signature alone, as a receiver of HITL.sh's headers sees it.
        only_body = {k: v for k, v in headers.items() if not k.lower().startswith("webhook-")}
        with pytest.raises(reviewloop.WebhookVerificationError):
            webhooks.verify(body, only_body, secret)  # could be a replay
        assert webhooks.verify(body, only_body, secret, allow_body_signature=True)["event"] == "request.created"
        changed = bytearray(body)
        changed[len(changed) // 2] ^= 0x01
        for given in (headers, only_body):
            with pytest.raises(reviewloop.WebhookVerificationError):
                webhooks.verify(bytes(changed), given, secret, allow_body_signature=True)
        forged = dict(headers, **{"webhook-signature": "v1,é"})
        with pytest.raises(reviewloop.WebhookVerificationError):
            webhooks.verify(body, forged, secret)
        with pytest.raises(reviewloop.WebhookVerificationError):
            webhooks.verify(body, headers, "whsec_" + "A" * 32)
        with pytest.raises(reviewloop.WebhookVerificationError):
            webhooks.verify(body, headers, secret, now=time.time() + 3600)
        receiver.shutdown()
    finally:
        server.stop()


def test_langchain_tools_ask_the_loop(server):
    from langchain_core.tools import tool

    from reviewloop.langchain import human_as_tool, require_approval

    loop_id, reviewer_key = server.loop_with_reviewer()
    client = reviewloop.Client(server.base, server.admin_key)

    @tool
    def send_email(to: str) -> str:
        """Send an email to a customer."""
        return f"sent to {to}"

    guarded = require_approval(client, loop_id, send_email)
    assert guarded.name == "send_email"
    Reviewer(server, reviewer_key, True)
    assert guarded.invoke({"to": "ana@example.com"}) == "sent to ana@example.com"
    Reviewer(server, reviewer_key, False, comment="Not to customers")
    said = guarded.invoke({"to": "ben@example.com"})
    assert "did not approve" in said and "Not to customers" in said, said

    ask = human_as_tool(client, loop_id)
    Reviewer(server, reviewer_key, "Use the EU region")
    assert ask.invoke({"question": "Which region?"}) == "Use the EU region"
