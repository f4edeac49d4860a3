"""Fold chat-completions stream chunks into Reasonix chunks (pure, no I/O)."""

from __future__ import annotations

import json

from reasonix.errors import ProviderStreamError
from reasonix.provider.base import PartialCall, as_int, load_event, stream_error
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import Chunk, ChunkKind, Usage

TYPE_CHECKING = False  # typing is not imported at run time (it costs a start 2-3 ms)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["OpenAIFolder", "parse_usage"]


def parse_usage(u: dict[str, Any]) -> Usage:
    """OpenAI ``usage``, including DeepSeek's cache hit/miss counters."""
    details = u.get("prompt_tokens_details") or {}
    cached = as_int(details.get("cached_tokens"))
    if "prompt_cache_hit_tokens" in u:  # DeepSeek
        cached = as_int(u.get("prompt_cache_hit_tokens"))
    out_details = u.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=as_int(u.get("prompt_tokens")),
        output_tokens=as_int(u.get("completion_tokens")),
        cache_read_tokens=cached,
        reasoning_tokens=as_int(out_details.get("reasoning_tokens")),
    )


class OpenAIFolder:
    """Text and reasoning pass through; tool-call deltas fold by ``index`` (PROV-16)."""

    def __init__(self, where: str = "openai") -> None:
        self.where = where
        self.done = False
        self.finish_reason = ""
        self.usage: Usage | None = None
        self._calls: dict[int, PartialCall] = {}
        self._last_index = -1

    def feed(self, event: ServerSentEvent) -> list[Chunk]:
        """Chunks for one ``data:`` event."""
        if event.data == "[DONE]":
            self.done = True
            return []
        obj = load_event(event, self.where)
        if not isinstance(obj, dict):
            raise ProviderStreamError(f"{self.where}: unexpected event {event.data[:120]!r}")
        if obj.get("error"):
            raise stream_error(self.where, obj)
        if isinstance(obj.get("usage"), dict):
            self.usage = parse_usage(obj["usage"])
        out: list[Chunk] = []
        for choice in obj.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            # DeepSeek says reasoning_content; vLLM/OpenRouter say reasoning.
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                out.append(Chunk(ChunkKind.REASONING, text=reasoning))
            content = delta.get("content")
            if isinstance(content, str) and content:
                out.append(Chunk(ChunkKind.TEXT, text=content))
            for tc in delta.get("tool_calls") or []:
                self._fold_call(tc)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return out

    def _fold_call(self, tc: dict[str, Any]) -> None:
        index = tc.get("index")
        if not isinstance(index, int):
            # Some gateways omit index: a new id starts a new call.
            new = tc.get("id") and (
                self._last_index < 0 or self._calls[self._last_index].id != tc["id"]
            )
            index = len(self._calls) if new or self._last_index < 0 else self._last_index
        self._last_index = index
        call = self._calls.setdefault(index, PartialCall())
        if tc.get("id") and not call.id:
            call.id = str(tc["id"])
        fn = tc.get("function") or {}
        if fn.get("name") and not call.name:
            call.name = str(fn["name"])
        args = fn.get("arguments")
        if isinstance(args, dict):  # some local servers send the object, not its text
            args = json.dumps(args, ensure_ascii=False)
        if isinstance(args, str) and args:
            call.parts.append(args)

    def finish(self) -> list[Chunk]:
        """Complete calls, usage and DONE — or a stream error if the end never came."""
        if not self.done and not self.finish_reason:
            raise ProviderStreamError(f"{self.where}: stream ended before the response finished")
        out = [
            Chunk(ChunkKind.TOOL_CALL, tool_call=self._calls[i].complete(f"call_{i}", self.where))
            for i in sorted(self._calls)
        ]
        if self.usage is not None:
            out.append(Chunk(ChunkKind.USAGE, usage=self.usage))
        reason = self.finish_reason or "stop"
        if self._calls and reason == "stop":
            reason = "tool_calls"
        out.append(Chunk(ChunkKind.DONE, finish_reason=reason))
        return out
