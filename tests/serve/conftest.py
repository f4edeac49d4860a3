"""The fake provider's key for in-process servers (subprocesses get it from serve_kit)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
