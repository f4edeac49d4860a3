"""Fold chat-completions stream chunks into Reasonix chunks (pure, no I/O).

One fold reads every OpenAI-compatible dialect we know of: OpenAI itself
(``delta.refusal``, logprobs, a usage-only last chunk), DeepSeek and vLLM
(``reasoning_content``), OpenRouter (``reasoning``, error objects in a 200
stream), xAI (reasoning tokens outside ``completion_tokens``), Mistral and
Magistral (``content`` as a list of typed parts), Moonshot (usage inside the
choice), Qwen/DashScope, Ollama and llama.cpp (``timings``). A whole
``chat.completion`` object (``choices[].message`` instead of ``delta``) folds
the same way, for servers that ignore ``stream: true``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from reasonix.errors import ProviderStreamError
from reasonix.provider.base import PartialCall, as_int, load_event, stream_error
from reasonix.provider.sse import ServerSentEvent
from reasonix.provider.types import Chunk, ChunkKind, ToolCall, Usage

if TYPE_CHECKING:
    from typing import Any

__all__ = ["FINISH_MAP", "OpenAIFolder", "parse_usage"]

# The vendors' finish_reason values -> FINISH_REASONS. A name not listed here
# ends the answer as "complete" with the vendor's word kept in Chunk.detail.
FINISH_MAP = {
    "stop": "complete",
    "eos": "complete",  # some local servers
    "end_turn": "complete",  # gateways fronting Anthropic
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",  # the deprecated functions API
    "length": "length",
    "max_tokens": "length",
    "model_length": "length",  # Mistral: the context window, not max_tokens, ran out
    "content_filter": "content_filter",
    "sensitive": "content_filter",  # Moonshot's moderation
    "refusal": "refusal",
    "error": "error",  # OpenRouter: the upstream failed mid-answer
    "abort": "error",  # SGLang / vLLM: the server aborted the request
    "insufficient_system_resource": "error",  # DeepSeek: cut for lack of capacity
}
# Vendor words whose meaning is fully said by the mapped reason (no detail needed).
_PLAIN = frozenset({"stop", "tool_calls", "function_call", "length", "content_filter", "refusal"})


def parse_usage(u: dict[str, Any], timings: Any = None) -> Usage:
    """OpenAI ``usage``, including DeepSeek's cache counters and xAI's reasoning count.

    ``output_tokens`` is what the vendor bills as output: xAI leaves reasoning
    tokens out of ``completion_tokens`` (they show only in
    ``completion_tokens_details.reasoning_tokens`` and in ``total_tokens``), so
    they are added back when the arithmetic says they are outside. llama.cpp's
    ``timings.cache_n`` (prompt tokens reused from its cache) stands in for a
    cache counter when the usage has none.
    """
    details = u.get("prompt_tokens_details") or {}
    cached = as_int(details.get("cached_tokens")) if isinstance(details, dict) else 0
    if "prompt_cache_hit_tokens" in u:  # DeepSeek
        cached = as_int(u.get("prompt_cache_hit_tokens"))
    prompt = as_int(u.get("prompt_tokens"))
    if not cached and isinstance(timings, dict):
        cached = min(as_int(timings.get("cache_n")), prompt)
    out_details = u.get("completion_tokens_details") or {}
    reasoning = as_int(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else 0
    completion = as_int(u.get("completion_tokens"))
    total = as_int(u.get("total_tokens"))
    output = completion
    # OpenAI and DeepSeek count reasoning inside completion_tokens (prompt +
    # completion == total); xAI does not (prompt + completion + reasoning == total).
    if reasoning and (reasoning > completion or prompt + completion + reasoning <= total):
        output = completion + reasoning
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


def _thinking_text(value: Any) -> str:
    """The text of a thinking part's payload: a string or a list of text parts (Magistral)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            p if isinstance(p, str) else str(p.get("text") or "")
            for p in value
            if isinstance(p, (str, dict))
        )
    return ""


def _complete_json(raw: str) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


class OpenAIFolder:
    """Text and reasoning pass through; tool-call deltas fold by ``index`` (PROV-16)."""

    def __init__(self, where: str = "openai") -> None:
        self.where = where
        self.done = False
        self.finish_reason = ""  # the vendor's own word
        self.usage: Usage | None = None
        self.refused = False  # refusal text arrived (delta.refusal or a refusal part)
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
        # {"error": {...}} (OpenAI, OpenRouter, SGLang) or {"object": "error", ...} (vLLM)
        if obj.get("error") or obj.get("object") == "error":
            raise stream_error(self.where, obj)
        if isinstance(obj.get("usage"), dict):
            self.usage = parse_usage(obj["usage"], obj.get("timings"))
        out: list[Chunk] = []
        for choice in obj.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if isinstance(choice.get("usage"), dict):  # Moonshot puts it in the choice
                self.usage = parse_usage(choice["usage"], obj.get("timings"))
            delta = choice.get("delta")
            whole = not isinstance(delta, dict)
            if whole:
                # a whole message: a non-streamed answer, or a gateway that sends one
                delta = choice.get("message")
            if isinstance(delta, dict):
                out += self._fold_delta(delta, whole)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return out

    def _fold_delta(self, delta: dict[str, Any], whole: bool) -> list[Chunk]:
        out: list[Chunk] = []
        # DeepSeek/llama.cpp say reasoning_content; vLLM/OpenRouter/Ollama say reasoning.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            out.append(Chunk(ChunkKind.REASONING, text=reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            out.append(Chunk(ChunkKind.TEXT, text=content))
        elif isinstance(content, list):
            out += self._parts(content)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            # OpenAI: the model declined; its explanation is the answer the user sees
            self.refused = True
            out.append(Chunk(ChunkKind.TEXT, text=refusal))
        for position, tc in enumerate(delta.get("tool_calls") or []):
            if isinstance(tc, dict):
                if whole and not isinstance(tc.get("index"), int):
                    tc = {**tc, "index": position}  # a message lists each call once, whole
                self._fold_call(tc)
        return out

    def _parts(self, parts: list[Any]) -> list[Chunk]:
        """Typed content parts (Mistral/Magistral and others): text, thinking, refusal."""
        out: list[Chunk] = []
        for part in parts:
            if isinstance(part, str):
                kind, text = ChunkKind.TEXT, part
            elif not isinstance(part, dict):
                continue
            elif part.get("type") in ("text", "output_text", None):
                kind, text = ChunkKind.TEXT, str(part.get("text") or "")
            elif part.get("type") in ("thinking", "reasoning", "reasoning_text"):
                payload = part.get(part["type"]) if part["type"] != "reasoning_text" else None
                kind, text = ChunkKind.REASONING, _thinking_text(payload or part.get("text"))
            elif part.get("type") == "refusal":
                self.refused = True
                kind, text = ChunkKind.TEXT, str(part.get("refusal") or part.get("text") or "")
            else:
                continue  # image, reference/citation and other parts carry no answer text
            if text:
                out.append(Chunk(kind, text=text))
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

    def _finished_calls(self, reason: str) -> list[ToolCall]:
        calls = [self._calls[i].complete(f"call_{i}", self.where) for i in sorted(self._calls)]
        if reason == "length" and calls:
            # Calls stream one after another, so only the last can have been cut;
            # an object's every strict prefix is invalid JSON, so a complete one
            # was not. Its text stays verbatim: the agent must never run it.
            last = self._calls[max(self._calls)]
            raw = "".join(last.parts)
            if not _complete_json(raw):
                calls[-1].arguments = raw
                calls[-1].truncated = True
        return calls

    def finish(self) -> list[Chunk]:
        """Complete calls, usage and DONE — or a stream error if the end never came."""
        if not self.done and not self.finish_reason:
            raise ProviderStreamError(f"{self.where}: stream ended before the response finished")
        vendor = self.finish_reason
        reason = FINISH_MAP.get(vendor, "complete")
        detail = "" if vendor in _PLAIN or not vendor else vendor
        if reason in ("complete", "tool_calls"):
            # a call that arrived is the answer's end whatever the vendor said;
            # "tool_calls" with none (a gateway's quirk) leaves nothing to run
            reason = "tool_calls" if self._calls else "refusal" if self.refused else "complete"
        out = [Chunk(ChunkKind.TOOL_CALL, tool_call=c) for c in self._finished_calls(reason)]
        if self.usage is not None:
            out.append(Chunk(ChunkKind.USAGE, usage=self.usage))
        out.append(Chunk(ChunkKind.DONE, finish_reason=reason, detail=detail))
        return out
