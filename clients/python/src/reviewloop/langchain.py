"""LangChain tools (``pip install reviewloop[langchain]``): a tool that asks
a loop of people before another tool runs, and a tool an agent calls to
ask people a question."""

from __future__ import annotations

from typing import Any

try:
    from langchain_core.tools import BaseTool, StructuredTool
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError("reviewloop.langchain needs the extra: pip install 'reviewloop[langchain]'") from error

from ._client import Client
from .errors import Rejected


def require_approval(client: Client, loop_id: str, tool: BaseTool, **request_fields: Any) -> StructuredTool:
    """``tool``, asking ``loop_id`` before each run. A refusal is returned to
    the agent as the tool's answer (with the reviewer's comment), so it can
    choose another way instead of failing."""
    guarded = client.require_approval(loop_id, **request_fields)(_runner(tool))

    def run(**kwargs: Any) -> Any:
        try:
            return guarded(**kwargs)
        except Rejected as refused:
            said = f" The reviewer said: {refused.comment}" if refused.comment else ""
            return f"A person did not approve running {tool.name} ({refused.reason}).{said}"

    return StructuredTool.from_function(
        func=run,
        name=tool.name,
        description=f"{tool.description} (a person approves each call first)",
        args_schema=tool.args_schema,
    )


def _runner(tool: BaseTool) -> Any:
    def run(**kwargs: Any) -> Any:
        return tool.invoke(kwargs)

    run.__qualname__ = tool.name
    return run


def human_as_tool(client: Client, loop_id: str, **request_fields: Any) -> StructuredTool:
    """A tool ``ask_human(question)`` that puts the question to ``loop_id``
    and returns a person's answer."""
    ask = client.human_as_tool(loop_id, **request_fields)

    def ask_human(question: str) -> str:
        return ask(question)

    return StructuredTool.from_function(
        func=ask_human,
        name="ask_human",
        description="Ask a person a question when you need guidance, a judgement or a fact you do not have. "
                    "Input: the question, complete enough to answer without other context.",
    )
