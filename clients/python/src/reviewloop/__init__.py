"""reviewloop: send review requests to people from Python.

>>> from reviewloop import Client
>>> client = Client("http://127.0.0.1:8080", api_key="rl_...")
>>> @client.require_approval(loop_id)
... def refund(order_id: str, amount: float) -> None: ...
"""

from ._client import AsyncClient, Client
from .errors import (
    AuthenticationError,
    ConflictError,
    ConnectionError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    Rejected,
    ReviewLoopError,
    ServerError,
    ValidationError,
    WaitTimeout,
)
from .models import Answer, Loop, Request, RequestPage, TestClock
from .webhooks import WebhookVerificationError

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "AsyncClient",
    "AuthenticationError",
    "Client",
    "ConflictError",
    "ConnectionError",
    "Loop",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "Rejected",
    "Request",
    "RequestPage",
    "ReviewLoopError",
    "ServerError",
    "TestClock",
    "ValidationError",
    "WaitTimeout",
    "WebhookVerificationError",
]
