"""errors.classify (ERR-5) and the Cancel token (ARCH-6)."""

from __future__ import annotations

import threading
import time

import pytest

from reasonix.cancel import Cancel
from reasonix.errors import (
    Cancelled,
    CompactionRequired,
    ConfigError,
    ProviderAPIError,
    ProviderConnectionError,
    ToolError,
    classify,
)


@pytest.mark.parametrize(
    ("err", "reason"),
    [
        (CompactionRequired("x"), "context.exhausted"),
        (ProviderAPIError(400, "maximum context length exceeded"), "context.exhausted"),
        (ProviderAPIError(429, "slow down"), "provider.transient"),
        (ProviderAPIError(503, "overloaded"), "provider.transient"),
        (ProviderAPIError(401, "bad key"), "provider.rejected"),
        (ProviderConnectionError("reset"), "provider.transient"),
        (Cancelled("stop"), "cancelled"),
        (ToolError("nope"), "unclassified"),
        (ValueError("untyped"), "unclassified"),
    ],
)
def test_classify_uses_types_not_messages(err: Exception, reason: str) -> None:
    assert classify(err) == reason


def test_config_error_names_file_line_and_key() -> None:
    err = ConfigError("must be between 0.65 and 0.85", file="reasonix.toml", line=3, key="x.y")
    assert str(err) == "reasonix.toml:3, key 'x.y': must be between 0.65 and 0.85"
    assert (err.file, err.line, err.key) == ("reasonix.toml", 3, "x.y")


def test_api_error_keeps_status_and_request_id() -> None:
    err = ProviderAPIError(500, "boom", request_id="req-1")
    assert err.status == 500 and "req-1" in str(err)


def test_cancel_runs_callbacks_once_and_children_follow() -> None:
    root = Cancel()
    child = root.child()
    calls: list[str] = []
    child.on_cancel(lambda: calls.append("child"))
    root.cancel("user")
    root.cancel("again")
    assert calls == ["child"]
    assert child.cancelled and child.reason == "user"
    with pytest.raises(Cancelled):
        child.raise_if_cancelled()


def test_callback_registered_after_cancel_runs_at_once() -> None:
    token = Cancel()
    token.cancel()
    hit: list[int] = []
    token.on_cancel(lambda: hit.append(1))
    assert hit == [1]


def test_unregistered_callback_does_not_run() -> None:
    token = Cancel()
    hit: list[int] = []
    remove = token.on_cancel(lambda: hit.append(1))
    remove()
    token.cancel()
    assert hit == []


def test_deadline_fires_callbacks() -> None:
    token = Cancel.with_timeout(0.05)
    fired = threading.Event()
    token.on_cancel(fired.set)
    assert fired.wait(2.0)
    assert token.cancelled and token.reason == "deadline exceeded"


def test_wait_returns_early_on_cancel() -> None:
    token = Cancel()
    threading.Timer(0.05, token.cancel).start()
    start = time.monotonic()
    assert token.wait(5.0) is True
    assert time.monotonic() - start < 4.0
