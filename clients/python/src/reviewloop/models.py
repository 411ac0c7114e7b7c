"""What the service answers, as typed objects. Each keeps the whole JSON
object it was read from in ``raw``, so fields added by newer servers are
never out of reach."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, List, Optional

#: Statuses of a request that will not change any more.
ENDED = ("completed", "timeout", "cancelled")


def _time(value: Any) -> Optional[datetime]:
    if not isinstance(value, str):
        return None
    # Python 3.9's fromisoformat takes neither "Z" nor more than 6 digits.
    text = value.replace("Z", "+00:00")
    if "." in text:
        head, _, tail = text.partition(".")
        digits = "".join(c for c in tail if c.isdigit())
        zone = tail[len(digits):]
        text = f"{head}.{digits[:6].ljust(6, '0')}{zone}"
    return datetime.fromisoformat(text)


@dataclass
class Loop:
    """A loop of reviewers."""

    id: str
    name: str
    description: Optional[str]
    creator_id: str
    member_count: Optional[int]
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Loop":
        return cls(
            id=data["id"],
            name=data.get("name", ""),
            description=data.get("description"),
            creator_id=data.get("creator_id", ""),
            member_count=data.get("member_count"),
            raw=data,
        )


@dataclass
class Answer:
    """One reviewer's answer (a quorum request has several)."""

    user_id: Optional[str]
    email: Optional[str]
    answer: Any
    comment: Optional[str]
    answered_at: Optional[datetime]

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Answer":
        return cls(
            user_id=data.get("user_id"),
            email=data.get("email"),
            answer=data.get("response_data"),
            comment=data.get("comment"),
            answered_at=_time(data.get("response_at")),
        )


@dataclass
class Request:
    """A review request, as the service shows it to its requester."""

    id: str
    loop_id: str
    status: str
    request_text: str
    response_type: str
    priority: str
    response_data: Any
    response_comment: Optional[str]
    response_by: Optional[str]
    default_response: Any
    context: Any
    timeout_at: Optional[datetime]
    created_at: Optional[datetime]
    responses: List[Answer]
    test: bool
    raw: Dict[str, Any] = field(repr=False)

    @property
    def ended(self) -> bool:
        """True once it was answered, timed out or cancelled."""
        return self.status in ENDED

    @property
    def polling_url(self) -> Optional[str]:
        return self.raw.get("polling_url")

    @property
    def coalesced_into(self) -> Optional[str]:
        """The open request this one joined (same ``coalesce_key`` or
        question): it ends when that one ends, with its answer."""
        return self.raw.get("coalesced_into")

    @property
    def reused_from(self) -> Optional[str]:
        """The earlier request whose answer, given by a person, this one
        took when it was made."""
        return self.raw.get("reused_from")

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Request":
        return cls(
            id=data["id"],
            loop_id=data.get("loop_id", ""),
            status=data.get("status", ""),
            request_text=data.get("request_text", ""),
            response_type=data.get("response_type", ""),
            priority=data.get("priority", ""),
            response_data=data.get("response_data"),
            response_comment=data.get("response_comment"),
            response_by=data.get("response_by"),
            default_response=data.get("default_response"),
            context=data.get("context"),
            timeout_at=_time(data.get("timeout_at")),
            created_at=_time(data.get("created_at")),
            responses=[Answer.from_json(r) for r in data.get("responses") or []],
            test=bool(data.get("test", False)),
            raw=data,
        )


@dataclass
class RequestPage:
    """One page of a request list; ``next_offset`` is ``None`` on the last."""

    requests: List[Request]
    total: int
    limit: int
    offset: int
    next_offset: Optional[int]

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "RequestPage":
        pagination = data.get("pagination") or {}
        return cls(
            requests=[Request.from_json(r) for r in data.get("requests", [])],
            total=data.get("total", 0),
            limit=data.get("limit", 0),
            offset=data.get("offset", 0),
            next_offset=pagination.get("next_offset"),
        )


@dataclass
class TestClock:
    """A test-mode key's clock."""

    now: Optional[datetime]
    offset_seconds: int
    answered: int
    timed_out: int
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "TestClock":
        return cls(
            now=_time(data.get("now")),
            offset_seconds=int(data.get("offset_seconds", 0)),
            answered=int(data.get("answered", 0)),
            timed_out=int(data.get("timed_out", 0)),
            raw=data,
        )
