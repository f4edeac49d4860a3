"""A local server with a small context window, as a :class:`FakeServer` responder.

A fixed script cannot foresee when compaction asks for a summary, so a
session that compacts is answered from each request instead::

    tight = TightWindow(6000, tool=("bash", '{"command": "make"}'), rounds=8)
    with FakeServer("openai", responder=tight) as srv: ...

Like llama-server or vLLM it counts every prompt itself (Reasonix's own
estimate of the whole JSON body, times ``factor``: its tokenizer is not
ours) and refuses one larger than the window in the server's own words
(``dialect``, see :data:`fakes.dialects.OVERFLOWS`); with
``counts_output=True`` it also refuses when prompt + ``max_tokens`` exceed
the window (as vLLM and the hosted APIs do). Every answer reports that
count as its usage (``report_usage=False``: none, as some local servers
do). A summary request (its last message is Reasonix's compaction
instruction) is answered with ``summary`` (with a tool call instead while
``misbehave`` is set, as a small model may); other requests call ``tool``
``rounds`` times, then answer ``final``. ``refused`` and
``summaries`` list the 0-based request numbers of each kind.
"""

from __future__ import annotations

import threading
from typing import Any

from fakes import dialects
from fakes.script import Step, ToolSpec, Turn
from fakes.server import RecordedRequest
from reasonix.agent.tokens import estimate_text

__all__ = ["SUMMARY_PREFIX", "TightWindow", "is_summary_request"]

SUMMARY_PREFIX = "Context maintenance:"  # how compaction.SUMMARY_INSTRUCTION starts


def is_summary_request(body: Any) -> bool:
    """True when a recorded JSON body is a compaction summary request (openai format)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not messages:
        return False
    last = messages[-1]
    content = last.get("content")
    return (
        last.get("role") == "user"
        and isinstance(content, str)
        and (content.startswith(SUMMARY_PREFIX))
    )


class TightWindow:
    """Answers like a local model server whose context window is ``window`` tokens."""

    def __init__(
        self,
        window: int,
        *,
        tool: tuple[str, str],
        rounds: int,
        factor: float = 1.0,
        counts_output: bool = False,
        report_usage: bool = True,
        dialect: str = "llama.cpp",
        summary: str = "SUMMARY: the command ran; its output was long. Next: run it again.",
        final: str = "all done",
    ) -> None:
        self.window = window
        self.tool = tool
        self.rounds = rounds
        self.factor = factor
        self.counts_output = counts_output
        self.report_usage = report_usage
        self.dialect = dialect
        self.summary = summary
        self.final = final
        self.misbehave = False
        self.refused: list[int] = []
        self.summaries: list[int] = []
        self.prompts: list[int] = []  # the counted prompt of every request, in order
        self.called = 0  # tool rounds answered so far
        self._lock = threading.Lock()

    def count(self, rec: RecordedRequest) -> int:
        """The prompt size this server sees for a request."""
        return int(self.factor * estimate_text(rec.body.decode("utf-8", "replace")))

    def __call__(self, rec: RecordedRequest) -> Step:
        body = rec.json if isinstance(rec.json, dict) else {}
        prompt = self.count(rec)
        out = body.get("max_tokens") or body.get("max_completion_tokens") or 0
        with self._lock:
            n = len(self.prompts)
            self.prompts.append(prompt)
            if prompt > self.window or (self.counts_output and prompt + out > self.window):
                self.refused.append(n)
                return dialects.OVERFLOWS[self.dialect](self.window, prompt)
            usage = {"input_tokens": prompt if self.report_usage else 0, "output_tokens": 20}
            if is_summary_request(body):
                self.summaries.append(n)
                if self.misbehave:
                    name, args = self.tool
                    return Turn.tools([ToolSpec(name, args, id=f"call_{n}")], usage=usage)
                return Turn.text_only(self.summary, usage=usage)
            if self.called < self.rounds:
                self.called += 1
                name, args = self.tool
                return Turn.tools([ToolSpec(name, args, id=f"call_{n}")], usage=usage)
            return Turn.text_only(self.final, usage=usage)
