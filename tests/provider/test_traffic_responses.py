"""Vendor-shaped OpenAI Responses streams replayed through ``reasonix run --json`` (issue 33).

Every body below is written by hand from the event shapes OpenAI documents
(API reference "Streaming events", the Responses guides) and the openai-python
SDK's own types and test fixtures; ``source`` names the place for each case,
and tests/provider/TRAFFIC_SOURCES.md lists them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import Turn
from traffic_kit import Case, Replayed, replay, sse, verify

# platform.openai.com/docs/api-reference/responses-streaming
REF = "OpenAI API reference, Responses streaming events"
TYPES = "openai/openai-python src/openai/types/responses/"
FIXTURES = "openai/openai-python tests/lib/responses/"


class Stream:
    """A Responses event stream in the documented order, ``sequence_number`` counted."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.output: list[dict[str, Any]] = []
        self._resp = {"id": "resp_68a1", "object": "response", "model": "gpt-5", "output": []}
        self.ev("response.created", response={**self._resp, "status": "in_progress"})
        self.ev("response.in_progress", response={**self._resp, "status": "in_progress"})

    def ev(self, typ: str, **fields: Any) -> Stream:
        self.events.append({"type": typ, "sequence_number": len(self.events), **fields})
        return self

    def reasoning(self, summary: list[str], encrypted: str = "") -> Stream:
        oi, rid = len(self.output), f"rs_{len(self.output)}"
        self.ev(
            "response.output_item.added",
            output_index=oi,
            item={"id": rid, "type": "reasoning", "summary": []},
        )
        for si, text in enumerate(summary):
            part = {"type": "summary_text", "text": ""}
            self.ev(
                "response.reasoning_summary_part.added",
                item_id=rid,
                output_index=oi,
                summary_index=si,
                part=part,
            )
            for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
                self.ev(
                    "response.reasoning_summary_text.delta",
                    item_id=rid,
                    output_index=oi,
                    summary_index=si,
                    delta=piece,
                )
            self.ev(
                "response.reasoning_summary_text.done",
                item_id=rid,
                output_index=oi,
                summary_index=si,
                text=text,
            )
        item: dict[str, Any] = {
            "id": rid,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": t} for t in summary],
        }
        if encrypted:
            item["encrypted_content"] = encrypted
        return self._done(oi, item)

    def message(
        self,
        *parts: str | tuple[str, str],
        phase: str | None = None,
        annotations: list[dict[str, Any]] | None = None,
        cut: bool = False,
    ) -> Stream:
        """A message item; a ``("refusal", text)`` part is a refusal, ``cut`` stops it early."""
        oi, mid = len(self.output), f"msg_{len(self.output)}"
        head: dict[str, Any] = {
            "id": mid,
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        if phase:
            head["phase"] = phase
        self.ev("response.output_item.added", output_index=oi, item=head)
        content: list[dict[str, Any]] = []
        for ci, raw in enumerate(parts):
            kind, text = raw if isinstance(raw, tuple) else ("output_text", raw)
            where = {"item_id": mid, "output_index": oi, "content_index": ci}
            if kind == "refusal":
                self.ev(
                    "response.content_part.added", **where, part={"type": "refusal", "refusal": ""}
                )
                for piece in text.split(" "):
                    self.ev(
                        "response.refusal.delta",
                        **where,
                        delta=piece + " " if piece != text.split(" ")[-1] else piece,
                    )
                self.ev("response.refusal.done", **where, refusal=text)
                part: dict[str, Any] = {"type": "refusal", "refusal": text}
            else:
                self.ev(
                    "response.content_part.added",
                    **where,
                    part={"type": "output_text", "text": "", "annotations": []},
                )
                for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
                    self.ev("response.output_text.delta", **where, delta=piece, logprobs=[])
                notes = annotations or []
                for n, note in enumerate(notes):
                    self.ev(
                        "response.output_text.annotation.added",
                        **where,
                        annotation_index=n,
                        annotation=note,
                    )
                if cut:
                    content.append({"type": "output_text", "text": text, "annotations": notes})
                    break
                self.ev("response.output_text.done", **where, text=text, logprobs=[])
                part = {"type": "output_text", "text": text, "annotations": notes, "logprobs": []}
            self.ev("response.content_part.done", **where, part=part)
            content.append(part)
        item = {**head, "status": "incomplete" if cut else "completed", "content": content}
        return self._done(oi, item)

    def call(self, call_id: str, name: str, arguments: str, *, cut: bool = False) -> Stream:
        """A function_call item; ``cut`` ends it mid-arguments (no done events)."""
        oi, fid = len(self.output), f"fc_{len(self.output)}"
        head = {
            "id": fid,
            "type": "function_call",
            "status": "in_progress",
            "call_id": call_id,
            "name": name,
            "arguments": "",
        }
        self.ev("response.output_item.added", output_index=oi, item=head)
        third = max(1, len(arguments) // 3)
        for piece in (arguments[:third], arguments[third : 2 * third], arguments[2 * third :]):
            self.ev(
                "response.function_call_arguments.delta", item_id=fid, output_index=oi, delta=piece
            )
        if cut:
            self.output.append({**head, "status": "incomplete", "arguments": arguments})
            return self
        self.ev(
            "response.function_call_arguments.done",
            item_id=fid,
            output_index=oi,
            arguments=arguments,
        )
        return self._done(oi, {**head, "status": "completed", "arguments": arguments})

    def search(self, query: str, urls: list[str]) -> Stream:
        oi, wid = len(self.output), f"ws_{len(self.output)}"
        self.ev(
            "response.output_item.added",
            output_index=oi,
            item={"id": wid, "type": "web_search_call", "status": "in_progress"},
        )
        for phase in ("in_progress", "searching", "completed"):
            self.ev(f"response.web_search_call.{phase}", item_id=wid, output_index=oi)
        action = {
            "type": "search",
            "query": query,
            "sources": [{"type": "url", "url": u} for u in urls],
        }
        return self._done(
            oi, {"id": wid, "type": "web_search_call", "status": "completed", "action": action}
        )

    def _done(self, oi: int, item: dict[str, Any]) -> Stream:
        self.ev("response.output_item.done", output_index=oi, item=item)
        self.output.append(item)
        return self

    def end(self, usage: dict[str, Any] | None = None, incomplete: str = "") -> str:
        """``response.completed`` (or ``response.incomplete`` with that reason), as SSE."""
        resp: dict[str, Any] = {**self._resp, "status": "incomplete" if incomplete else "completed"}
        resp["output"] = self.output
        resp["incomplete_details"] = {"reason": incomplete} if incomplete else None
        resp["usage"] = usage or USAGE
        self.ev("response.incomplete" if incomplete else "response.completed", response=resp)
        return sse(*self.events, named=True)

    def failed(self, code: str, message: str) -> str:
        resp = {**self._resp, "status": "failed", "error": {"code": code, "message": message}}
        self.ev("response.failed", response={**resp, "output": self.output, "usage": None})
        return sse(*self.events, named=True)


USAGE: dict[str, Any] = {
    "input_tokens": 300,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 40,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 340,
}


def _assistant(got: Replayed) -> list[dict[str, Any]]:
    """What the next request replays of the first answer (after the prompt, before results)."""
    items = got.next_body()["input"]
    start = next(i for i, it in enumerate(items) if it.get("role") == "user") + 1
    ends = [
        i for i, it in enumerate(items) if i >= start and it.get("type") == "function_call_output"
    ]
    return items[start : ends[0] if ends else len(items)]


def _text_item(
    *texts: str, phase: str = "", notes: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": t, "annotations": notes or []} for t in texts],
    }
    if phase:
        item["phase"] = phase
    return item


def _fc(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


# -- the cases ------------------------------------------------------------------------

ENC = "gAAAAABoX_enc_reasoning_blob=="
CITE = {
    "type": "url_citation",
    "start_index": 0,
    "end_index": 28,
    "url": "https://www.python.org/downloads/release/python-3130/",
    "title": "Python 3.13.0",
}
READ = ("call_8Jd2", "read_file", '{"path":"notes.txt"}')
LIST = ("call_Q1x0", "ls", '{"path":"."}')


def _reasoning_replayed(got: Replayed) -> None:
    items = _assistant(got)
    assert items[0] == {
        "type": "reasoning",
        "id": "rs_0",
        "summary": [{"type": "summary_text", "text": "**Planning** The user wants the notes."}],
        "encrypted_content": ENC,
    }
    assert items[1:] == [_fc(*READ)]


def _call_replayed(got: Replayed) -> None:
    assert _assistant(got) == [_fc(*READ)]
    outputs = [i for i in got.next_body()["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == [READ[0]]


def _parallel_replayed(got: Replayed) -> None:
    assert _assistant(got) == [_fc(*READ), _fc(*LIST)]
    outputs = [i for i in got.next_body()["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == [READ[0], LIST[0]]


def _search_replayed(got: Replayed) -> None:
    items = _assistant(got)
    assert (
        items[0]["type"] == "web_search_call"
        and items[0]["action"]["query"] == "python 3.13 release date"
    )
    assert items[1:] == [_text_item("Python 3.13 came out in Oct 2024.", notes=[CITE]), _fc(*LIST)]


def _mixed_cut_replayed(got: Replayed) -> None:
    # the completed call is run and replayed; the cut one is neither
    assert _assistant(got) == [_fc(*READ)]
    outputs = [i for i in got.next_body()["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == [READ[0]]
    assert "cut by the output limit" in outputs[-1]["output"]
    assert not Path("draft.md").exists()


def _two_items_replayed(got: Replayed) -> None:
    assert _assistant(got) == [
        _text_item("First, the summary."),
        _text_item("Second, the details."),
        _fc(*READ),
    ]


def _two_parts_replayed(got: Replayed) -> None:
    assert _assistant(got) == [_text_item("Part one.", "Part two."), _fc(*READ)]


def _commentary_replayed(got: Replayed) -> None:
    assert _assistant(got) == [
        _text_item("I'll read the notes first.", phase="commentary"),
        _fc(*READ),
    ]


def _commentary_final_replayed(got: Replayed) -> None:
    assert _assistant(got) == [
        _text_item("Checking the greeting conventions.", phase="commentary"),
        _text_item("Hello!", phase="final_answer"),
        _fc(*LIST),
    ]


def _failed_error(got: Replayed) -> None:
    assert got.code == 1
    message = got.result["error"]["message"]
    assert "server_error" in message and "The model failed to generate a response." in message


CASES = [
    Case(
        "plain_text",
        "responses",
        Stream().message("Hello! How can I help you today?").end(),
        source=f"{REF}: output_item.added, content_part.added, output_text.delta/.done, completed",
        prompt="hi",
        text="Hello! How can I help you today?",
        stop_reason="complete",
        subtype="success",
        usage={"input_tokens": 300, "output_tokens": 40, "cache_read_input_tokens": 0},
        requests=1,
    ),
    Case(
        "reasoning_encrypted_then_call",
        "responses",
        Stream()
        .reasoning(["**Planning** The user wants the notes."], encrypted=ENC)
        .call(*READ)
        .end(),
        source=f"{REF} (reasoning_summary_text.delta); OpenAI reasoning guide, encrypted "
        "reasoning items (include reasoning.encrypted_content, store=false)",
        then=[Turn.text_only("No notes yet.")],
        text="No notes yet.",
        absent=("Planning",),
        stop_reason="complete",
        check=_reasoning_replayed,
    ),
    Case(
        "function_call",
        "responses",
        Stream().call(*READ).end(),
        source=f"{REF}: function_call_arguments.delta/.done; OpenAI function calling guide "
        "(call_id, function_call_output)",
        then=[Turn.text_only("The file is missing.")],
        text="The file is missing.",
        stop_reason="complete",
        requests=2,
        usage={"input_tokens": 400, "output_tokens": 60},
        check=_call_replayed,
    ),
    Case(
        "parallel_function_calls",
        "responses",
        Stream().call(*READ).call(*LIST).end(),
        source="OpenAI function calling guide, parallel function calling (several "
        f"function_call items in one output); {REF}",
        then=[Turn.text_only("Listed and read.")],
        text="Listed and read.",
        requests=2,
        check=_parallel_replayed,
    ),
    Case(
        "web_search_call",
        "responses",
        Stream()
        .search(
            "python 3.13 release date", ["https://www.python.org/downloads/release/python-3130/"]
        )
        .message("Python 3.13 came out in Oct 2024.", annotations=[CITE])
        .call(*LIST)
        .end(),
        source="OpenAI web search guide (web_search_call item, action.search with sources, "
        f"url_citation annotations); {REF}: web_search_call.*, output_text.annotation.added",
        then=[Turn.text_only("done")],
        check=_search_replayed,
    ),
    Case(
        "incomplete_max_output_tokens_text",
        "responses",
        Stream()
        .message("The three causes are: first, the", cut=True)
        .end(incomplete="max_output_tokens"),
        source=f"{FIXTURES}test_stream_incomplete.py (response.incomplete, reason "
        f"max_output_tokens); {TYPES}response.py IncompleteDetails",
        text="The three causes are: first, the",
        stop_reason="max_tokens",
        subtype="truncated",
        requests=1,
    ),
    Case(
        "incomplete_inside_function_call",
        "responses",
        Stream()
        .call(
            "call_W9",
            "write_file",
            '{"path":"draft.md","content":"# Plan\\n\\n1. Read the',
            cut=True,
        )
        .end(incomplete="max_output_tokens"),
        source=f"{REF}: function_call_arguments.delta, then response.incomplete (reason "
        "max_output_tokens) with the function_call item status incomplete",
        stop_reason="max_tokens",
        subtype="truncated",
        requests=1,
        check=lambda got: (
            None if not Path("draft.md").exists() else pytest.fail("the cut call ran")
        ),
    ),
    Case(
        "incomplete_after_a_complete_call",
        "responses",
        Stream()
        .call(*READ)
        .call("call_W9", "write_file", '{"path":"draft.md","content":"# Pl', cut=True)
        .end(incomplete="max_output_tokens"),
        source=f"{REF}: a completed function_call (output_item.done), then one cut by "
        "response.incomplete",
        then=[Turn.text_only("Read it; will write next.")],
        text="Read it; will write next.",
        requests=2,
        check=_mixed_cut_replayed,
    ),
    Case(
        "incomplete_content_filter",
        "responses",
        Stream().message("Here is how to", cut=True).end(incomplete="content_filter"),
        source=f"{TYPES}response.py (IncompleteDetails.reason content_filter); {REF}",
        text="Here is how to",
        stop_reason="content_filter",
        subtype="filtered",
        requests=1,
    ),
    Case(
        "failed_response",
        "responses",
        Stream().failed("server_error", "The model failed to generate a response."),
        source=f"{REF}: response.failed; {TYPES}response_error.py (code, message)",
        subtype="error_during_execution",
        requests=1,
        check=_failed_error,
    ),
    Case(
        "refusal_part",
        "responses",
        Stream().message(("refusal", "I'm sorry, I can't help with that.")).end(),
        source=f"{REF}: response.refusal.delta/.done; {TYPES}response_output_refusal.py; "
        f"{FIXTURES}test_commentary_parsing.py (refusal content part)",
        text="I'm sorry, I can't help with that.",
        stop_reason="refusal",
        subtype="refused",
        requests=1,
    ),
    Case(
        "two_message_items",
        "responses",
        Stream().message("First, the summary.").message("Second, the details.").call(*READ).end(),
        source=f"{TYPES}response.py (output: several items, order model-dependent); {REF}",
        then=[Turn.text_only("done")],
        check=_two_items_replayed,
    ),
    Case(
        "two_message_items_shown_apart",
        "responses",
        Stream().message("About the API.").message("This Wikipedia entry explains it.").end(),
        source=f"{TYPES}response.py (output: several message items); {REF}",
        text="About the API.\n\nThis Wikipedia entry explains it.",
        stop_reason="complete",
    ),
    Case(
        "two_output_text_parts",
        "responses",
        Stream().message("Part one.", "Part two.").call(*READ).end(),
        source=f"{REF}: response.content_part.added with content_index 0 and 1 in one message item",
        then=[Turn.text_only("done")],
        check=_two_parts_replayed,
    ),
    Case(
        "phase_commentary_then_call",
        "responses",
        Stream().message("I'll read the notes first.", phase="commentary").call(*READ).end(),
        source=f"{FIXTURES}test_commentary_parsing.py (commentary message, then a function_call); "
        f"{TYPES}response_output_message.py (phase: preserve and resend)",
        then=[Turn.text_only("The notes are missing.")],
        text="The notes are missing.",
        absent=("read the notes first",),
        check=_commentary_replayed,
    ),
    Case(
        "phase_commentary_and_final_answer",
        "responses",
        Stream()
        .message("Checking the greeting conventions.", phase="commentary")
        .message("Hello!", phase="final_answer")
        .end(),
        source=f"{FIXTURES}test_commentary_parsing.py (commentary + final_answer messages)",
        text="Hello!",
        stop_reason="complete",
        requests=1,
    ),
    Case(
        "phase_commentary_and_final_answer_replayed",
        "responses",
        Stream()
        .message("Checking the greeting conventions.", phase="commentary")
        .message("Hello!", phase="final_answer")
        .call(*LIST)
        .end(),
        source=f"{TYPES}response_output_message.py (phase on every assistant message)",
        then=[Turn.text_only("done")],
        check=_commentary_final_replayed,
    ),
    Case(
        "usage_cached_and_reasoning_tokens",
        "responses",
        Stream()
        .reasoning(["Thinking."], encrypted=ENC)
        .message("42.")
        .end(
            {
                "input_tokens": 2048,
                "input_tokens_details": {"cached_tokens": 1920},
                "output_tokens": 320,
                "output_tokens_details": {"reasoning_tokens": 256},
                "total_tokens": 2368,
            }
        ),
        source=f"{TYPES}response_usage.py (input_tokens_details.cached_tokens, "
        "output_tokens_details.reasoning_tokens; output_tokens includes them)",
        text="42.",
        usage={"input_tokens": 128, "output_tokens": 320, "cache_read_input_tokens": 1920},
    ),
    Case(
        "usage_reasoning_outside_output_tokens",
        "responses",
        Stream()
        .message("Hi.")
        .end(
            {
                "input_tokens": 700,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 1,
                "output_tokens_details": {"reasoning_tokens": 290},
                "total_tokens": 991,
            }
        ),
        source="xAI usage accounting (reasoning tokens beside, not inside, the output count; "
        "total_tokens = input + output + reasoning), in the Responses usage shape",
        text="Hi.",
        usage={"input_tokens": 700, "output_tokens": 291},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_responses_traffic(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    verify(case, replay(case, tmp_path, capsys, monkeypatch))
