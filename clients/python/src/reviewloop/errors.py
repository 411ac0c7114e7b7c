"""What can go wrong, as exceptions a caller can tell apart."""

from __future__ import annotations

from typing import Any, Optional


class ReviewLoopError(Exception):
    """The service refused a call, or could not be reached.

    ``status`` is the HTTP status (``None`` when there was no answer) and
    ``message`` the service's own words.
    """

    def __init__(self, message: str, status: Optional[int] = None, body: Any = None) -> None:
        super().__init__(message if status is None else f"{status}: {message}")
        self.message = message
        self.status = status
        self.body = body


class ValidationError(ReviewLoopError):
    """400 or 422: the input is invalid; ``message`` names every bad field."""


class AuthenticationError(ReviewLoopError):
    """401: the API key is missing, unknown or revoked."""


class PermissionDeniedError(ReviewLoopError):
    """403: the key may not do this (a permission, a test-mode key, a suspended account)."""


class NotFoundError(ReviewLoopError):
    """404: it does not exist, or the key may not see it."""


class ConflictError(ReviewLoopError):
    """409: the request's state does not allow it (already answered, claimed, ...)."""


class RateLimitError(ReviewLoopError):
    """429: over the key's allowance; ``retry_after`` says in how many seconds to retry."""

    def __init__(self, message: str, status: Optional[int] = None, body: Any = None,
                 retry_after: Optional[float] = None) -> None:
        super().__init__(message, status, body)
        self.retry_after = retry_after


class ServerError(ReviewLoopError):
    """5xx: the service could not do it now."""


class ConnectionError(ReviewLoopError):  # noqa: A001 - the library's own, under its namespace
    """The service did not answer (refused, reset, timed out)."""


class WaitTimeout(ReviewLoopError):
    """``wait`` gave up before the request ended; ``request`` is how it stood."""

    def __init__(self, message: str, request: Any) -> None:
        super().__init__(message)
        self.request = request


class Rejected(ReviewLoopError):
    """A reviewer did not approve (or the request timed out on a false default).

    ``request`` is the ended request; ``comment`` the reviewer's note, if any;
    ``reason`` is ``"rejected"``, ``"timeout"`` or ``"cancelled"``.
    """

    def __init__(self, message: str, request: Any, reason: str) -> None:
        super().__init__(message)
        self.request = request
        self.reason = reason
        self.comment: Optional[str] = getattr(request, "response_comment", None)


def error_for(status: int, message: str, body: Any, retry_after: Optional[float]) -> ReviewLoopError:
    """The exception of an answer with this status."""
    if status == 429:
        return RateLimitError(message, status, body, retry_after)
    kind = {
        400: ValidationError,
        401: AuthenticationError,
        403: PermissionDeniedError,
        404: NotFoundError,
        409: ConflictError,
        422: ValidationError,
    }.get(status)
    if kind is None:
        kind = ServerError if status >= 500 else ReviewLoopError
    return kind(message, status, body)
