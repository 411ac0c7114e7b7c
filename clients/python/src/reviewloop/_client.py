"""The clients. Every operation is described once (``_Ops``: method, path,
body, how to read the answer); ``Client`` runs it with ``httpx.Client``,
``AsyncClient`` with ``httpx.AsyncClient``, both through the same retry
rules."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import random
import time
import uuid
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Iterator, List, Mapping, Optional, TypeVar

import httpx

from . import errors
from .models import Loop, Request, RequestPage, TestClock

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
#: The longest the service holds a long-poll (seconds).
LONG_POLL_SECONDS = 60
#: Statuses worth another try after a pause.
RETRIED_STATUSES = (429, 502, 503, 504)
#: What an approval asks unless the caller says otherwise: yes or no, no
#: when nobody answers within the hour.
APPROVAL_DEFAULTS: Dict[str, Any] = {"response_type": "boolean", "default_response": False, "timeout_seconds": 3600}


@dataclass
class _Call:
    """One HTTP call and how to read its answer's ``data``."""

    method: str
    path: str
    read: Callable[[Any], Any]
    params: Optional[Dict[str, Any]] = None
    body: Optional[Dict[str, Any]] = None
    idempotency_key: Optional[str] = None
    timeout: Optional[float] = None
    #: Tries after the first; ``None`` for the client's own.
    retries: Optional[int] = None


def _drop_none(fields: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def _message(response: httpx.Response) -> tuple:
    try:
        body = response.json()
    except ValueError:
        return response.text or response.reason_phrase, None
    if isinstance(body, dict):
        if isinstance(body.get("msg"), str):
            return body["msg"], body
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"], body
    return response.reason_phrase, body


def _retry_after(response: httpx.Response) -> Optional[float]:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _as_json(value: Any) -> Any:
    """``value`` if it is JSON, else its text (for the question's context)."""
    try:
        json.dumps(value, allow_nan=False)
        return value
    except (TypeError, ValueError):
        return repr(value)


def _question(fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple:
    """The words and context of an approval asked before calling ``fn``."""
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "a function"))
    try:
        signature = inspect.signature(fn)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = {}
        for parameter, value in bound.arguments.items():
            # `**kwargs` are shown one by one, as the caller named them.
            if signature.parameters[parameter].kind is inspect.Parameter.VAR_KEYWORD:
                arguments.update({k: _as_json(v) for k, v in value.items()})
            else:
                arguments[parameter] = _as_json(value)
    except (TypeError, ValueError):
        arguments = {"args": [_as_json(a) for a in args], "kwargs": {k: _as_json(v) for k, v in kwargs.items()}}
    shown = ", ".join(f"{k}={json.dumps(v)[:200]}" for k, v in arguments.items())
    text = f"Approve running `{name}`?\n\n`{name}({shown})`"[:2000]
    return text, {"function": name, "arguments": arguments}


class _Ops:
    """The operations, described once for both clients."""

    def _list_loops(self) -> _Call:
        return _Call("GET", "/v1/api/loops", lambda d: [Loop.from_json(x) for x in d["loops"]])

    def _get_loop(self, loop_id: str) -> _Call:
        return _Call("GET", f"/v1/api/loops/{loop_id}", lambda d: Loop.from_json(d["loop"]))

    def _create_request(self, loop_id: str, fields: Dict[str, Any], idempotency_key: Optional[str]) -> _Call:
        body = {
            "type": "markdown",
            "response_type": "boolean",
            "priority": "medium",
            "processing_type": "time-sensitive" if "timeout_seconds" in fields else "deferred",
            **_drop_none(fields),
        }
        return _Call("POST", f"/v1/api/loops/{loop_id}/requests", lambda d: Request.from_json(d["request"]),
                     body=body, idempotency_key=idempotency_key or str(uuid.uuid4()))

    def _get_request(self, request_id: str, wait: Optional[int] = None) -> _Call:
        params = {"wait": wait} if wait else None
        return _Call("GET", f"/v1/api/requests/{request_id}", lambda d: Request.from_json(d["request"]),
                     params=params, timeout=(wait or 0) + 30.0)

    def _poll(self, request_id: str, deadline: Optional[float]) -> _Call:
        """One long-poll of ``wait``: no retries of its own (``wait`` has
        its own), and never past the deadline by more than a few seconds."""
        left = LONG_POLL_SECONDS if deadline is None else max(0.0, deadline - time.monotonic())
        seconds = max(1, min(LONG_POLL_SECONDS, int(left)))
        call = self._get_request(request_id, wait=seconds)
        call.timeout = seconds + (30.0 if deadline is None else 5.0)
        call.retries = 0
        return call

    @staticmethod
    def _pause_in_wait(error: errors.ReviewLoopError, failures: int, deadline: Optional[float]) -> float:
        """How long ``wait`` rests after a failed poll: as long as a rate
        limit asks, else a growing backoff; never past the deadline."""
        if isinstance(error, errors.RateLimitError) and error.retry_after is not None:
            pause = min(error.retry_after, 300.0)
        else:
            pause = min(0.5 * 2 ** failures, 10.0)
        if deadline is not None:
            pause = min(pause, max(0.0, deadline - time.monotonic()))
        return pause

    def _list_requests(self, filters: Dict[str, Any]) -> _Call:
        return _Call("GET", "/v1/api/requests", RequestPage.from_json, params=_drop_none(filters))

    def _update_request(self, request_id: str, fields: Dict[str, Any]) -> _Call:
        return _Call("PATCH", f"/v1/api/requests/{request_id}", lambda d: Request.from_json(d["request"]),
                     body=fields)

    def _cancel_request(self, request_id: str) -> _Call:
        return _Call("DELETE", f"/v1/api/requests/{request_id}", lambda d: d)

    def _add_feedback(self, request_id: str, fields: Dict[str, Any]) -> _Call:
        return _Call("POST", f"/v1/api/requests/{request_id}/feedback", lambda d: d["feedback"], body=fields)

    def _test_clock(self) -> _Call:
        return _Call("GET", "/v1/api/test/clock", TestClock.from_json)

    def _advance_clock(self, seconds: int) -> _Call:
        return _Call("POST", "/v1/api/test/clock", TestClock.from_json, body={"advance_seconds": seconds})

    @staticmethod
    def _approval_fields(fields: Dict[str, Any], text: str, context: Dict[str, Any]) -> Dict[str, Any]:
        """The fields of a guard's question: the caller's, the question's
        words unless the caller gave some, and the call in ``context``."""
        asked = {**fields}
        asked.setdefault("request_text", text)
        asked["context"] = {**(fields.get("context") or {}), **context}
        return asked

    @staticmethod
    def _question_fields(fields: Dict[str, Any], question: str) -> Dict[str, Any]:
        """The fields of ``human_as_tool``'s question: a ``text`` request
        with an hour to answer unless the caller says otherwise."""
        return {"response_type": "text", "timeout_seconds": 3600, **fields, "request_text": question}

    @staticmethod
    def _answer_of(ended: Request) -> str:
        """``human_as_tool``'s answer, or :class:`errors.Rejected` when there is none."""
        if ended.status == "cancelled" or ended.response_data is None:
            raise errors.Rejected(f"no answer ({ended.status})", ended, ended.status)
        return str(ended.response_data)

    @staticmethod
    def _verdict(request: Request) -> None:
        """Raises :class:`errors.Rejected` unless ``request`` approved."""
        if request.status == "completed" and request.response_data is True:
            return
        if request.status == "timeout" and request.response_data is True:
            return
        reason = {"timeout": "timeout", "cancelled": "cancelled"}.get(request.status, "rejected")
        said = f": {request.response_comment}" if request.response_comment else ""
        raise errors.Rejected(f"not approved ({reason}){said}", request, reason)


class _Base(_Ops):
    def __init__(self, base_url: str, api_key: Optional[str], max_retries: int) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.max_retries = max_retries

    def _headers(self, call: _Call) -> Dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "reviewloop-python/0.1.0"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        if call.idempotency_key:
            headers["Idempotency-Key"] = call.idempotency_key
        return headers

    def _request(self, call: _Call) -> Dict[str, Any]:
        """The arguments of ``httpx``'s ``request`` for ``call``."""
        return {
            "method": call.method,
            "url": self.base_url + call.path,
            "params": call.params,
            "json": call.body,
            "headers": self._headers(call),
            "timeout": call.timeout if call.timeout is not None else httpx.USE_CLIENT_DEFAULT,
        }

    def _pause(self, call: _Call, attempt: int, response: Optional[httpx.Response]) -> Optional[float]:
        """How long to wait before trying ``call`` again after ``response``
        (``None``: the connection failed), or ``None`` to stop."""
        if not self._may_repeat(call, response):
            return None
        if attempt >= (self.max_retries if call.retries is None else call.retries):
            return None
        if response is not None:
            retried = RETRIED_STATUSES
            if call.idempotency_key is not None:
                # 409: the same create is still being made; ask again.
                retried = RETRIED_STATUSES + (409,)
            if response.status_code not in retried:
                return None
            after = _retry_after(response)
            if after is not None:
                return min(after, 60.0)
        return min(0.5 * 2 ** attempt, 8.0) * (0.5 + random.random() / 2)

    @staticmethod
    def _may_repeat(call: _Call, response: Optional[httpx.Response]) -> bool:
        """Whether sending ``call`` again cannot do it twice: a read, a
        create (it carries its idempotency key), or anything the service
        refused before doing it (429, 503)."""
        if call.method == "GET" or call.idempotency_key is not None:
            return True
        return response is not None and response.status_code in (429, 503)

    def _read(self, call: _Call, response: httpx.Response) -> Any:
        if response.is_success:
            try:
                body = response.json()
            except ValueError as error:
                raise errors.ServerError(f"the answer is not JSON: {error}", response.status_code) from None
            return call.read(body.get("data") if isinstance(body, dict) and "data" in body else body)
        message, body = _message(response)
        raise errors.error_for(response.status_code, message, body, _retry_after(response))

    @staticmethod
    def _unreachable(error: httpx.HTTPError) -> errors.ConnectionError:
        return errors.ConnectionError(f"the service could not be reached: {error}")


class Client(_Base):
    """A blocking client of reviewloop's API.

    >>> client = Client("http://127.0.0.1:8080", api_key="rl_...")
    >>> request = client.create_request(loop_id, request_text="Ship it?")
    >>> client.wait(request.id).response_data
    """

    def __init__(self, base_url: str = DEFAULT_BASE_URL, api_key: Optional[str] = None, *,
                 timeout: float = 30.0, max_retries: int = 3, http: Optional[httpx.Client] = None) -> None:
        super().__init__(base_url, api_key, max_retries)
        self._http = http or httpx.Client(timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _run(self, call: _Call) -> Any:
        attempt = 0
        while True:
            try:
                response = self._http.request(**self._request(call))
            except httpx.HTTPError as error:
                pause = self._pause(call, attempt, None)
                if pause is None:
                    raise self._unreachable(error) from None
            else:
                pause = self._pause(call, attempt, response)
                if pause is None:
                    return self._read(call, response)
            time.sleep(pause)
            attempt += 1

    def list_loops(self) -> List[Loop]:
        """The loops this key's account created."""
        return self._run(self._list_loops())

    def get_loop(self, loop_id: str) -> Loop:
        return self._run(self._get_loop(loop_id))

    def create_request(self, loop_id: str, *, idempotency_key: Optional[str] = None, **fields: Any) -> Request:
        """Sends a request to a loop. ``request_text`` is required; the rest
        default to a ``boolean`` question of ``medium`` priority. A retry
        after a lost answer never asks twice (an ``Idempotency-Key`` is sent)."""
        return self._run(self._create_request(loop_id, fields, idempotency_key))

    def get_request(self, request_id: str) -> Request:
        return self._run(self._get_request(request_id))

    def list_requests(self, *, status: Optional[str] = None, priority: Optional[str] = None,
                      loop_id: Optional[str] = None, limit: Optional[int] = None,
                      offset: Optional[int] = None, sort: Optional[str] = None, **filters: Any) -> RequestPage:
        """One page of requests; see :meth:`iter_requests` for all of them."""
        return self._run(self._list_requests(dict(status=status, priority=priority, loop_id=loop_id,
                                                  limit=limit, offset=offset, sort=sort, **filters)))

    def iter_requests(self, **filters: Any) -> Iterator[Request]:
        """Every request matching ``filters``, page after page."""
        offset: Optional[int] = filters.pop("offset", 0)
        while offset is not None:
            page = self.list_requests(offset=offset, **filters)
            yield from page.requests
            offset = page.next_offset

    def update_request(self, request_id: str, **fields: Any) -> Request:
        return self._run(self._update_request(request_id, fields))

    def cancel_request(self, request_id: str) -> Dict[str, Any]:
        return self._run(self._cancel_request(request_id))

    def add_feedback(self, request_id: str, **fields: Any) -> Dict[str, Any]:
        return self._run(self._add_feedback(request_id, fields))

    def test_clock(self) -> TestClock:
        """A test-mode key's clock."""
        return self._run(self._test_clock())

    def advance_clock(self, seconds: int) -> TestClock:
        """Moves a test-mode key's clock ahead; test requests due within the
        jump are answered or time out before this returns."""
        return self._run(self._advance_clock(seconds))

    def wait(self, request_id: str, timeout: Optional[float] = None) -> Request:
        """Long-polls until the request ended and returns it. Network errors
        and restarts of the service are waited out; raises
        :class:`errors.WaitTimeout` after ``timeout`` seconds (never by default)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        failures = 0
        request: Optional[Request] = None
        while True:
            try:
                request = self._run(self._poll(request_id, deadline))
                failures, pause = 0, 0.0
            except (errors.ConnectionError, errors.ServerError, errors.RateLimitError) as error:
                failures += 1
                pause = self._pause_in_wait(error, failures, deadline)
            if request is not None and request.ended:
                return request
            if deadline is not None and time.monotonic() >= deadline:
                raise errors.WaitTimeout(f"request {request_id} did not end within {timeout} s", request)
            time.sleep(pause)

    def approve(self, loop_id: str, **fields: Any) -> Request:
        """Asks ``loop_id`` a yes/no question and waits; raises
        :class:`errors.Rejected` unless the answer is yes."""
        asked = {**APPROVAL_DEFAULTS, **fields}
        request = self.create_request(loop_id, **asked)
        ended = self.wait(request.id)
        self._verdict(ended)
        return ended

    def require_approval(self, loop_id: str, **request_fields: Any) -> Callable[[F], F]:
        """A decorator: each call of the function first asks ``loop_id``
        whether to run it (the question names the function and carries its
        arguments in ``context``), waits, and runs it only if approved;
        otherwise raises :class:`errors.Rejected` with the reviewer's comment.
        Async functions wait without blocking their event loop."""

        def decorate(fn: F) -> F:
            def ask(args: tuple, kwargs: dict) -> Request:
                text, context = _question(fn, args, kwargs)
                fields = self._approval_fields(request_fields, text, context)
                return self.approve(loop_id, **fields)

            if inspect.iscoroutinefunction(fn):
                @functools.wraps(fn)
                async def run_async(*args: Any, **kwargs: Any) -> Any:
                    # Waited for without holding a thread for the hour a
                    # person may take.
                    text, context = _question(fn, args, kwargs)
                    fields = self._approval_fields(request_fields, text, context)
                    async with AsyncClient(self.base_url, self.api_key, max_retries=self.max_retries) as peer:
                        await peer.approve(loop_id, **fields)
                    return await fn(*args, **kwargs)
                return run_async  # type: ignore[return-value]

            @functools.wraps(fn)
            def run(*args: Any, **kwargs: Any) -> Any:
                ask(args, kwargs)
                return fn(*args, **kwargs)
            return run  # type: ignore[return-value]

        return decorate

    def human_as_tool(self, loop_id: str, **request_fields: Any) -> Callable[[str], str]:
        """A function ``ask(question) -> str`` that puts the question to
        ``loop_id`` as a ``text`` request and returns the answer (or the
        request's default answer, if it timed out with one)."""

        def ask(question: str) -> str:
            created = self.create_request(loop_id, **self._question_fields(request_fields, question))
            return self._answer_of(self.wait(created.id))

        return ask


class AsyncClient(_Base):
    """The same operations as :class:`Client`, for asyncio."""

    def __init__(self, base_url: str = DEFAULT_BASE_URL, api_key: Optional[str] = None, *,
                 timeout: float = 30.0, max_retries: int = 3,
                 http: Optional[httpx.AsyncClient] = None) -> None:
        super().__init__(base_url, api_key, max_retries)
        self._http = http or httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *_: Any) -> None:
        await self.aclose()

    async def _run(self, call: _Call) -> Any:
        attempt = 0
        while True:
            try:
                response = await self._http.request(**self._request(call))
            except httpx.HTTPError as error:
                pause = self._pause(call, attempt, None)
                if pause is None:
                    raise self._unreachable(error) from None
            else:
                pause = self._pause(call, attempt, response)
                if pause is None:
                    return self._read(call, response)
            await asyncio.sleep(pause)
            attempt += 1

    async def list_loops(self) -> List[Loop]:
        return await self._run(self._list_loops())

    async def get_loop(self, loop_id: str) -> Loop:
        return await self._run(self._get_loop(loop_id))

    async def create_request(self, loop_id: str, *, idempotency_key: Optional[str] = None,
                             **fields: Any) -> Request:
        return await self._run(self._create_request(loop_id, fields, idempotency_key))

    async def get_request(self, request_id: str) -> Request:
        return await self._run(self._get_request(request_id))

    async def list_requests(self, **filters: Any) -> RequestPage:
        return await self._run(self._list_requests(filters))

    async def iter_requests(self, **filters: Any) -> AsyncIterator[Request]:
        """Every request matching ``filters``, page after page."""
        offset: Optional[int] = filters.pop("offset", 0)
        while offset is not None:
            page = await self.list_requests(offset=offset, **filters)
            for request in page.requests:
                yield request
            offset = page.next_offset

    async def update_request(self, request_id: str, **fields: Any) -> Request:
        return await self._run(self._update_request(request_id, fields))

    async def cancel_request(self, request_id: str) -> Dict[str, Any]:
        return await self._run(self._cancel_request(request_id))

    async def add_feedback(self, request_id: str, **fields: Any) -> Dict[str, Any]:
        return await self._run(self._add_feedback(request_id, fields))

    async def test_clock(self) -> TestClock:
        return await self._run(self._test_clock())

    async def advance_clock(self, seconds: int) -> TestClock:
        return await self._run(self._advance_clock(seconds))

    async def wait(self, request_id: str, timeout: Optional[float] = None) -> Request:
        """As :meth:`Client.wait`, without blocking the event loop."""
        deadline = None if timeout is None else time.monotonic() + timeout
        failures = 0
        request: Optional[Request] = None
        while True:
            try:
                request = await self._run(self._poll(request_id, deadline))
                failures, pause = 0, 0.0
            except (errors.ConnectionError, errors.ServerError, errors.RateLimitError) as error:
                failures += 1
                pause = self._pause_in_wait(error, failures, deadline)
            if request is not None and request.ended:
                return request
            if deadline is not None and time.monotonic() >= deadline:
                raise errors.WaitTimeout(f"request {request_id} did not end within {timeout} s", request)
            await asyncio.sleep(pause)

    async def approve(self, loop_id: str, **fields: Any) -> Request:
        asked = {**APPROVAL_DEFAULTS, **fields}
        request = await self.create_request(loop_id, **asked)
        ended = await self.wait(request.id)
        self._verdict(ended)
        return ended

    def require_approval(self, loop_id: str, **request_fields: Any) -> Callable[[F], F]:
        """As :meth:`Client.require_approval`, for async functions (use
        :class:`Client` to guard plain functions)."""

        def decorate(fn: F) -> F:
            if not inspect.iscoroutinefunction(fn):
                raise TypeError("AsyncClient.require_approval guards async functions; use Client for "
                                f"{getattr(fn, '__name__', fn)!r}")

            @functools.wraps(fn)
            async def run(*args: Any, **kwargs: Any) -> Any:
                text, context = _question(fn, args, kwargs)
                await self.approve(loop_id, **self._approval_fields(request_fields, text, context))
                return await fn(*args, **kwargs)
            return run  # type: ignore[return-value]

        return decorate

    def human_as_tool(self, loop_id: str, **request_fields: Any) -> Callable[[str], Awaitable[str]]:
        """An async ``ask(question) -> str``, as :meth:`Client.human_as_tool`."""

        async def ask(question: str) -> str:
            created = await self.create_request(loop_id, **self._question_fields(request_fields, question))
            return self._answer_of(await self.wait(created.id))

        return ask


__all__ = ["AsyncClient", "Client"]
