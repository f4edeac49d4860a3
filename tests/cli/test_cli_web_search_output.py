"""How web searches and escape decisions leave the CLI: the card, stream-json, the
redacted --events-jsonl form, usage, and the start notice for a kind without search."""

from __future__ import annotations

from reasonix.agent.events import ApprovalRequested, SandboxEscape, WebSearch
from reasonix.agent.telemetry import Telemetry, usage_fields
from reasonix.boot.parts import search_notice
from reasonix.cli.output import event_json, redacted_event
from reasonix.cli.search_card import MAX_RESULTS, card_lines
from reasonix.config.model import ProviderConfig, ResolvedModel
from reasonix.permission import ApprovalRequest
from reasonix.provider.anthropic import AnthropicProvider
from reasonix.provider.openai import OpenAIProvider
from reasonix.provider.types import Usage, WebSearchResult

HIT = WebSearchResult("Release notes", "https://example.org/notes")
EVENT = WebSearch("srvtoolu_1", "when is it out", (HIT, WebSearchResult("", "https://x.org/")))


def test_the_card_lists_query_titles_and_links() -> None:
    lines = card_lines(EVENT)
    assert lines[0] == '⌕ web search "when is it out" · 2 results'
    assert lines[1] == "  1. Release notes — https://example.org/notes"
    assert lines[2] == "  2. https://x.org/"
    linked = card_lines(EVENT, links=True)
    assert "\033]8;;https://example.org/notes\033\\" in linked[1]  # OSC 8 hyperlink


def test_the_card_neutralises_remote_control_characters() -> None:
    evil = WebSearch(
        "1", "q\x1b[2J", (WebSearchResult("t\x1b]52;c;AAAA\x07", "https://e.org/\x1b"),)
    )
    text = "\n".join(card_lines(evil, links=True))
    assert "\x1b[2J" not in text and "\x07" not in text and "\\x1b" in text
    assert "\033]8;;https://e.org/" not in text  # a URL with controls is never put in an escape


def test_the_card_is_compact_and_reports_failures() -> None:
    many = WebSearch(
        "1", "q", tuple(WebSearchResult(f"t{i}", f"https://e.org/{i}") for i in range(9))
    )
    lines = card_lines(many)
    assert len(lines) == 1 + MAX_RESULTS + 1 and lines[-1] == "  … 4 more"
    failed = card_lines(WebSearch("1", "q", (), "max_uses_exceeded"))
    assert failed == ['⌕ web search "q" · failed (max_uses_exceeded)']


def test_stream_json_carries_everything_and_the_event_log_only_counts() -> None:
    full = event_json(EVENT)
    assert full == {
        "type": "web_search",
        "id": "srvtoolu_1",
        "query": "when is it out",
        "results": [{"title": "Release notes", "url": "https://example.org/notes"},
                    {"title": "", "url": "https://x.org/"}],
        "error": "",
    }  # fmt: skip
    assert redacted_event(EVENT) == {"event": "web_search", "id": "srvtoolu_1", "error": "",
                                     "result_count": 2}  # fmt: skip


def test_escape_decisions_are_logged_without_the_command() -> None:
    event = SandboxEscape("call_1", "curl secret.example", "because", False, "headless")
    assert event_json(event) == {
        "type": "sandbox_escape", "id": "call_1", "command": "curl secret.example",
        "justification": "because", "granted": False, "detail": "headless",
    }  # fmt: skip
    assert redacted_event(event) == {
        "event": "sandbox_escape",
        "id": "call_1",
        "granted": False,
        "detail": "headless",
    }
    question = ApprovalRequested(ApprovalRequest("sandbox escape", "run OUTSIDE …", {}, (), "", ""))
    assert redacted_event(question, tools=["bash"]) == {
        "event": "approval_request",
        "tool": "sandbox escape",
    }


def test_usage_reports_searches_only_when_there_were_any() -> None:
    assert "server_tool_use" not in usage_fields(Usage(10, 2))
    assert usage_fields(Usage(10, 2, web_search_requests=3))["server_tool_use"] == {
        "web_search_requests": 3
    }
    line = Telemetry([Usage(10, 2, web_search_requests=1), Usage(5, 1)]).summary_line(None)
    assert "1 web search ·" in line


def test_a_kind_without_search_gets_a_one_line_notice() -> None:
    for cls, kind, expected in ((OpenAIProvider, "openai", 1), (AnthropicProvider, "anthropic", 0)):
        cfg = ProviderConfig(name="p", kind=kind, base_url="http://127.0.0.1:9", web_search=True)
        notes = search_notice(ResolvedModel(cfg, "m"), cls(cfg))
        assert len(notes) == expected
        if notes:
            assert "no server-side web search" in notes[0] and "\n" not in notes[0]
    off = ProviderConfig(name="p", kind="openai", base_url="http://127.0.0.1:9")
    assert search_notice(ResolvedModel(off, "m"), OpenAIProvider(off)) == []
