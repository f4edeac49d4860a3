"""Each kind against its loopback fake: streaming, tool calls, usage, faults, cancel."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
from fakes import FakeServer, Fault, ToolSpec, Turn
from provider_kit import KINDS, Sleeps, client, collect, kinds_of, provider, request, text

from reasonix.cancel import Cancel
from reasonix.errors import (
    Cancelled,
    MissingAPIKey,
    ProviderAPIError,
    ProviderConnectionError,
    ProviderStreamError,
    ProviderTimeout,
)
from reasonix.provider.types import ChunkKind

ARGS_A = '{"path": "src/ü.py", "lines": [1, 2, 3], "nested": {"q": "a \\"b\\" c"}}'
ARGS_B = '{"pattern":"TODO|FIXME","glob":"**/*.py"}'
TWO_CALLS = [ToolSpec("read_file", ARGS_A, id="call_a"), ToolSpec("grep", ARGS_B, id="call_b")]


@pytest.mark.parametrize("kind", KINDS)
def test_text_and_reasoning_stream_in_order(kind: str) -> None:
    turn = Turn(text="The quick brown fox jumps.", reasoning="Let me think about it.")
    with FakeServer(kind, [turn], fragment=7) as srv:
        chunks = collect(provider(kind, srv.url))
    assert kinds_of(chunks) == [
        ChunkKind.REASONING,
        ChunkKind.TEXT,
        ChunkKind.USAGE,
        ChunkKind.DONE,
    ]
    assert text(chunks) == "The quick brown fox jumps."
    assert text(chunks, ChunkKind.REASONING) == "Let me think about it."
    assert len([c for c in chunks if c.kind is ChunkKind.TEXT]) == 5  # one per delta
    assert chunks[-1].finish_reason == "complete"


@pytest.mark.parametrize("kind", KINDS)
def test_two_interleaved_tool_calls_arrive_complete_once(kind: str) -> None:
    turn = Turn.tools(TWO_CALLS, text="Looking.", arg_pieces=5)
    with FakeServer(kind, [turn], fragment=3) as srv:
        chunks = collect(provider(kind, srv.url))
    calls = [c.tool_call for c in chunks if c.kind is ChunkKind.TOOL_CALL]
    assert [(c.id, c.name, c.arguments) for c in calls if c] == [
        ("call_a", "read_file", ARGS_A),
        ("call_b", "grep", ARGS_B),
    ]
    assert kinds_of(chunks) == [
        ChunkKind.TEXT,
        ChunkKind.TOOL_CALL,
        ChunkKind.USAGE,
        ChunkKind.DONE,
    ]
    assert chunks[-1].finish_reason == "tool_calls"


@pytest.mark.parametrize("kind", KINDS)
def test_tool_call_with_empty_arguments(kind: str) -> None:
    with FakeServer(kind, [Turn.tools([ToolSpec("list_dir", "{}")])]) as srv:
        chunks = collect(provider(kind, srv.url))
    calls = [c.tool_call for c in chunks if c.tool_call]
    assert len(calls) == 1 and calls[0].name == "list_dir" and calls[0].arguments == "{}"


@pytest.mark.parametrize("kind", KINDS)
def test_usage_with_cache_tokens(kind: str) -> None:
    usage = {
        "input_tokens": 1000,
        "output_tokens": 50,
        "cache_read_tokens": 600,
        "cache_write_tokens": 100 if kind == "anthropic" else 0,
        "reasoning_tokens": 0,
    }
    if kind != "anthropic":
        usage["reasoning_tokens"] = 7
    with FakeServer(kind, [Turn(text="ok", usage=usage)]) as srv:
        chunks = collect(provider(kind, srv.url))
    (u,) = [c.usage for c in chunks if c.kind is ChunkKind.USAGE]
    assert u is not None
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens) == (1000, 50, 600)
    assert u.cache_write_tokens == usage["cache_write_tokens"]
    assert u.reasoning_tokens == usage["reasoning_tokens"]


# -- faults ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "fault",
    [Fault.status(429, retry_after=0), Fault.status(503), Fault.status(529), Fault.reset()],
    ids=["429", "503", "529", "reset"],
)
def test_transient_fault_then_success(kind: str, fault: Fault) -> None:
    sleeps = Sleeps()
    with FakeServer(kind, [fault, Turn(text="recovered")]) as srv:
        chunks = collect(provider(kind, srv.url, http=client(sleeps)))
        assert len(srv.requests) == 2
        assert srv.requests[0].body == srv.requests[1].body
    assert text(chunks) == "recovered"
    assert len(sleeps.delays) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_persistent_500_fails_after_bound(kind: str) -> None:
    sleeps = Sleeps()
    with FakeServer(kind, [Fault.status(500, message="boom")] * 6) as srv:
        with pytest.raises(ProviderAPIError) as ei:
            provider(kind, srv.url, http=client(sleeps)).stream(request(), Cancel())
        assert len(srv.requests) == 5  # 1 + 4 retries (D20)
    assert ei.value.status == 500
    assert "boom" in ei.value.vendor_message
    assert ei.value.request_id == "req_fake_5"
    assert sleeps.delays == [1.0, 2.0, 4.0, 8.0]  # rand = 1.0: the full exponential


@pytest.mark.parametrize("kind", KINDS)
def test_400_is_not_retried_and_carries_vendor_message(kind: str) -> None:
    fault = Fault.status(400, message="model not found", error_type="invalid_request_error")
    with FakeServer(kind, [fault, Turn(text="never")]) as srv:
        with pytest.raises(ProviderAPIError) as ei:
            provider(kind, srv.url).stream(request(), Cancel())
        assert len(srv.requests) == 1
    assert ei.value.status == 400
    assert "model not found" in str(ei.value)
    assert "req_fake_1" in str(ei.value)


@pytest.mark.parametrize("kind", KINDS)
def test_context_overflow_400_is_classified(kind: str) -> None:
    with FakeServer(kind, [Fault.context_overflow()]) as srv, pytest.raises(ProviderAPIError) as ei:
        provider(kind, srv.url).stream(request(), Cancel())
    assert ei.value.is_context_overflow


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("chunked", [True, False])
def test_cut_mid_tool_call_is_a_stream_error_without_partial_calls(
    kind: str, chunked: bool
) -> None:
    full = Turn.tools(TWO_CALLS, text="a b", arg_pieces=4)
    from fakes.wire import render

    n = len(render(kind, full))
    cut = Turn.tools(TWO_CALLS, text="a b", arg_pieces=4, cut_after=n - 5)
    seen = []
    with FakeServer(kind, [cut], chunked=chunked) as srv:
        with pytest.raises(ProviderStreamError) as ei:
            for c in provider(kind, srv.url).stream(request(), Cancel()):
                seen.append(c)
        assert len(srv.requests) == 1  # never retried once output began
    assert not [c for c in seen if c.kind is ChunkKind.TOOL_CALL]
    assert text(seen) == "a b"
    assert "ended before" in str(ei.value) or "cut off" in str(ei.value)


@pytest.mark.parametrize("kind", KINDS)
def test_malformed_chunk_is_a_stream_error(kind: str) -> None:
    with (
        FakeServer(kind, [Turn(text="x y z", malformed_after=3)]) as srv,
        pytest.raises(ProviderStreamError, match="malformed"),
    ):
        collect(provider(kind, srv.url))


@pytest.mark.parametrize("kind", KINDS)
def test_error_event_mid_stream(kind: str) -> None:
    turn = Turn.tools(TWO_CALLS, error_after=6, error_message="Overloaded right now")
    seen = []
    with (
        FakeServer(kind, [turn]) as srv,
        pytest.raises(ProviderStreamError, match="Overloaded right now"),
    ):
        for c in provider(kind, srv.url).stream(request(), Cancel()):
            seen.append(c)
    assert not [c for c in seen if c.kind is ChunkKind.TOOL_CALL]


@pytest.mark.parametrize("kind", KINDS)
def test_silent_server_hits_the_idle_timeout(kind: str) -> None:
    with FakeServer(kind, [Fault.stall(5.0)]) as srv:
        start = time.monotonic()
        with pytest.raises(ProviderTimeout):
            provider(kind, srv.url, http=client(idle=0.3)).stream(request(), Cancel())
        assert time.monotonic() - start < 3.0
        assert len(srv.requests) == 1  # a silent server may be working: no retry


@pytest.mark.parametrize("kind", KINDS)
def test_slow_drip_mid_stream_hits_the_idle_timeout(kind: str) -> None:
    with (
        FakeServer(kind, [Turn(text="a b c d e f", delay=0.6)]) as srv,
        pytest.raises(ProviderTimeout),
    ):
        collect(provider(kind, srv.url, http=client(idle=0.2)))


def test_connection_refused_is_retried_then_a_connection_error() -> None:
    with FakeServer("openai", []) as srv:
        url = srv.url
    sleeps = Sleeps()
    with pytest.raises(ProviderConnectionError, match="cannot connect"):
        provider("openai", url, http=client(sleeps)).stream(request(), Cancel())
    assert len(sleeps.delays) == 4


# -- cancellation (PROV-19) ---------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_cancel_mid_stream_stops_promptly(kind: str) -> None:
    turn = Turn(text=" ".join(["word"] * 50), delay=0.15)
    cancel = Cancel()
    with FakeServer(kind, [turn]) as srv:
        it = provider(kind, srv.url, http=client(idle=10)).stream(request(), cancel)
        got = []
        for c in it:
            if c.kind is ChunkKind.TEXT:
                got.append(c)
                break
        # Cancel from another thread while the iterator is blocked in a read.
        timer = threading.Timer(0.05, cancel.cancel)
        timer.start()
        start = time.monotonic()
        with pytest.raises(Cancelled):
            for _ in it:
                pass
        elapsed = time.monotonic() - start - 0.05
        timer.join()
        # The server's next write fails only if the client really closed the socket.
        assert srv.wait_idle(3.0)
    assert got
    assert elapsed < 1.0, f"cancel took {elapsed:.3f}s"  # the behaviour bound is 200 ms


@pytest.mark.parametrize("kind", KINDS)
def test_cancel_before_first_byte(kind: str) -> None:
    cancel = Cancel()
    with FakeServer(kind, [Fault.stall(5.0)]) as srv:
        threading.Timer(0.1, cancel.cancel).start()
        start = time.monotonic()
        with pytest.raises(Cancelled):
            provider(kind, srv.url, http=client(idle=10)).stream(request(), cancel)
        assert time.monotonic() - start < 1.1


def test_cancel_aborts_the_backoff_wait() -> None:
    from reasonix.provider.http import HTTPClient, RetryPolicy, Timeouts

    real_sleep = HTTPClient(retry=RetryPolicy(), timeouts=Timeouts(connect=2, idle=2))
    cancel = Cancel()
    with FakeServer("openai", [Fault.status(429, retry_after=30), Turn(text="x")]) as srv:
        threading.Timer(0.1, cancel.cancel).start()
        start = time.monotonic()
        with pytest.raises(Cancelled):
            provider("openai", srv.url, http=real_sleep).stream(request(), cancel)
        assert time.monotonic() - start < 1.1
        assert len(srv.requests) == 1


def test_already_cancelled_token_sends_nothing() -> None:
    cancel = Cancel()
    cancel.cancel()
    with FakeServer("openai", [Turn(text="x")]) as srv, pytest.raises(Cancelled):
        provider("openai", srv.url).stream(request(), cancel)
        assert srv.requests == []


# -- targets and keys (PROV-5/7/8) ---------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_request_url_is_used_byte_for_byte(kind: str) -> None:
    with FakeServer(kind, [Turn(text="x")]) as srv:
        target = srv.url + "/gateway/%7Euser/Chat;v=2?api-version=2024-01-01&x=%20y"
        collect(provider(kind, srv.url, request_url=target, chat_url=srv.url + "/nope"))
        assert srv.requests[0].path == target[len(srv.url) :]


@pytest.mark.parametrize(
    ("kind", "path"),
    [("openai", "/legacy/chat"), ("anthropic", "/v1/messages"), ("responses", "/v1/responses")],
)
def test_chat_url_only_for_openai(kind: str, path: str) -> None:
    with FakeServer(kind, [Turn(text="x")]) as srv:
        collect(provider(kind, srv.url, chat_url=srv.url + "/legacy/chat"))
        assert srv.requests[0].path == path


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("openai", "/v1/chat/completions"),
        ("anthropic", "/v1/messages"),
        ("responses", "/v1/responses"),
    ],
)
def test_default_paths_and_headers(kind: str, path: str) -> None:
    with FakeServer(kind, [Turn(text="x")]) as srv:
        collect(provider(kind, srv.url, headers={"X-Team": "blue"}))
        rec = srv.requests[0]
    assert rec.path == path
    assert rec.header("user-agent", "").startswith("reasonix/")
    assert rec.header("content-type") == "application/json"
    assert rec.header("x-team") == "blue"
    if kind == "anthropic":
        assert rec.header("x-api-key") == "sk-test"
        assert rec.header("anthropic-version") == "2023-06-01"
        assert rec.header("authorization") is None
    else:
        assert rec.header("authorization") == "Bearer sk-test"


def test_anthropic_base_url_ending_in_v1() -> None:
    with FakeServer("anthropic", [Turn(text="x")]) as srv:
        collect(provider("anthropic", srv.url + "/v1/"))
        assert srv.requests[0].path == "/v1/messages"


def test_two_openai_vendors_each_get_their_own_key() -> None:
    from reasonix.config.model import ProviderConfig
    from reasonix.provider import new

    with (
        FakeServer("openai", [Turn(text="a")]) as one,
        FakeServer("openai", [Turn(text="b")]) as two,
    ):
        p1 = new("openai", ProviderConfig(name="one", base_url=one.url, api_key="key-one"))
        p2 = new("openai", ProviderConfig(name="two", base_url=two.url, api_key="key-two"))
        assert text(collect(p1)) == "a" and text(collect(p2)) == "b"  # type: ignore[arg-type]
        assert one.requests[0].header("authorization") == "Bearer key-one"
        assert two.requests[0].header("authorization") == "Bearer key-two"


def test_missing_key_is_raised_from_stream() -> None:
    with FakeServer("openai", []) as srv:
        p = provider("openai", srv.url, api_key_env="MY_VENDOR_KEY")
        p.cfg.api_key = ""
        with pytest.raises(MissingAPIKey, match="MY_VENDOR_KEY"):
            p.stream(request(), Cancel())
        assert srv.requests == []


def test_no_key_no_auth_header() -> None:
    with FakeServer("openai", [Turn(text="x")]) as srv:
        p = provider("openai", srv.url)
        p.cfg.api_key = ""
        collect(p)
        assert srv.requests[0].header("authorization") is None


# -- registry (PROV-2/3/21) -------------------------------------------------------------------


def test_registry_is_empty_until_kinds_are_imported() -> None:
    code = (
        "import reasonix.provider as p; print(p.kinds());"
        "import reasonix.provider.openai, reasonix.provider.anthropic, "
        "reasonix.provider.responses; print(p.kinds())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "['anthropic', 'openai', 'responses']"]


def test_body_is_compact_json_with_stream_flag() -> None:
    with FakeServer("openai", [Turn(text="x")]) as srv:
        collect(provider("openai", srv.url))
        body = srv.requests[0].body
    assert b": " not in body and b", " not in body
    assert json.loads(body)["stream"] is True


@pytest.mark.parametrize("kind", KINDS)
def test_json_error_with_200_is_raised_from_stream(kind: str) -> None:
    fault = Fault.status(200, body='{"error":{"message":"insufficient quota","type":"billing"}}')
    with FakeServer(kind, [fault]) as srv, pytest.raises(ProviderAPIError) as ei:
        provider(kind, srv.url).stream(request(), Cancel())
    assert "insufficient quota" in str(ei.value)
    assert ei.value.request_id == "req_fake_1"
