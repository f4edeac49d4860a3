"""Vendor-shaped streams replayed through the whole product (issue 33).

A :class:`Case` is one stream a vendor sends, written by hand from the shape
the vendor documents (``source`` names where). :func:`replay` serves it byte
for byte from a loopback server as the answer to the first request of a real
``reasonix run --json -y`` (in process, through the CLI entry point), then
whatever ``then`` scripts for later requests, and returns what came out: the
JSON result and every request body the product sent. The tests in
``test_traffic_*.py`` are tables of cases; each asserts the text shown, the
tool calls dispatched, the usage, the finish reason and the next request's body.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, Fault, Turn
from fakes.script import Step

from reasonix.cli.main import main

__all__ = ["Case", "Replayed", "replay", "replay_pyz", "sse", "verify"]


def sse(*events: dict[str, Any] | str, named: bool = False, done: bool = False) -> str:
    """An SSE body from JSON objects (``data: {...}``) in order.

    ``named`` adds ``event: <type>`` lines (Anthropic and Responses name their
    events after the object's ``type``); a plain string is put in verbatim (a
    comment line, ``data: [DONE]``, a malformed line). ``done`` ends with
    ``data: [DONE]`` (OpenAI-style chat streams).
    """
    out: list[str] = []
    for ev in events:
        if isinstance(ev, str):
            out.append(ev if ev.endswith("\n\n") else ev + "\n\n")
            continue
        head = f"event: {ev['type']}\n" if named and "type" in ev else ""
        out.append(f"{head}data: {json.dumps(ev)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out)


@dataclass
class Case:
    """One vendor stream and what the product must make of it."""

    name: str
    kind: str  # the provider kind that talks to this vendor: openai | anthropic | responses
    body: str  # the first answer, verbatim (an SSE stream, or an error body with ``status``)
    source: str  # where the vendor documents or publishes this shape
    status: int = 200  # a non-200 first answer (an error body)
    headers: dict[str, str] = field(default_factory=dict)  # unused unless the fake grows them
    then: list[Step] = field(default_factory=lambda: [Turn.text_only("done")])
    model: str = "vendor-model"
    toml: str = ""  # extra lines for the [[providers]] entry (model_overrides …) or after it
    prompt: str = "go"
    # expectations (None: not checked)
    text: str | None = None  # the result text, exactly
    contains: tuple[str, ...] = ()  # strings the result text must contain
    absent: tuple[str, ...] = ()  # strings the result text must not contain
    stop_reason: str | None = None  # the result's stop_reason
    subtype: str | None = None  # the result's subtype
    usage: dict[str, int] | None = None  # a subset of the result's usage
    requests: int | None = None  # how many requests the product sent in all
    check: Callable[[Replayed], None] | None = None  # anything more (next request body …)


@dataclass
class Replayed:
    """What one replay produced."""

    code: int
    result: dict[str, Any]
    bodies: list[dict[str, Any]]  # every request body, in order
    stderr: str

    @property
    def text(self) -> str:
        return str(self.result.get("result", ""))

    def next_body(self) -> dict[str, Any]:
        """The request sent after the replayed answer."""
        assert len(self.bodies) >= 2, f"no second request; result: {self.result}"
        return self.bodies[1]


def _provider_toml(case: Case, url: str) -> str:
    return (
        f'default_model = "vendor/{case.model}"\n\n[[providers]]\nname = "vendor"\n'
        f'kind = "{case.kind}"\nbase_url = "{url}"\nmodels = ["{case.model}"]\n'
        f'api_key_env = "FAKE_PROVIDER_KEY"\n{case.toml}'
    )


def replay(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], mp: pytest.MonkeyPatch
) -> Replayed:
    """Run ``reasonix run --json -y`` against ``case`` and return what came out."""
    ws = tmp_path / "ws"
    ws.mkdir()
    mp.chdir(ws)
    mp.setenv("FAKE_PROVIDER_KEY", "sk-vendor-test")
    first: Step = (
        Fault.sse(case.body) if case.status == 200 else Fault.status(case.status, body=case.body)
    )
    with FakeServer(case.kind, [first, *case.then]) as srv:
        (ws / "reasonix.toml").write_text(_provider_toml(case, srv.url))
        capsys.readouterr()
        code = main(["run", "--json", "-y", case.prompt])
        out, err = capsys.readouterr()
        bodies = [r.json for r in srv.requests]
    lines = [line for line in out.strip().splitlines() if line.strip()]
    assert lines, f"no output; stderr: {err}"
    return Replayed(code, json.loads(lines[-1]), bodies, err)


def replay_pyz(case: Case, tmp_path: Path, pyz: Path) -> Replayed:
    """:func:`replay` through the built archive in a process of its own (tests/e2e)."""
    import os
    import subprocess
    import sys

    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "REASONIX_HOME": str(home),
        "FAKE_PROVIDER_KEY": "sk-vendor-test",
        "REASONIX_TRUST_WORKSPACE": "1",  # the test wrote this workspace
    }
    first: Step = (
        Fault.sse(case.body) if case.status == 200 else Fault.status(case.status, body=case.body)
    )
    with FakeServer(case.kind, [first, *case.then]) as srv:
        (ws / "reasonix.toml").write_text(_provider_toml(case, srv.url))
        done = subprocess.run(
            [sys.executable, str(pyz), "run", "--json", "-y", case.prompt],
            cwd=ws, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        bodies = [r.json for r in srv.requests]
    lines = [line for line in done.stdout.strip().splitlines() if line.strip()]
    assert lines, f"no output; stderr: {done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    return Replayed(done.returncode, json.loads(lines[-1]), bodies, done.stderr)


def verify(case: Case, got: Replayed) -> None:
    """Assert every expectation ``case`` states."""
    where = f"{case.name}: result {json.dumps(got.result)[:2000]}"
    if case.text is not None:
        assert got.text == case.text, where
    for piece in case.contains:
        assert piece in got.text, where
    for piece in case.absent:
        assert piece not in got.text, where
    if case.stop_reason is not None:
        assert got.result.get("stop_reason") == case.stop_reason, where
    if case.subtype is not None:
        assert got.result.get("subtype") == case.subtype, where
    if case.usage is not None:
        usage = got.result.get("usage", {})
        assert {k: usage.get(k) for k in case.usage} == case.usage, where
    if case.requests is not None:
        assert len(got.bodies) == case.requests, where
    if case.check is not None:
        case.check(got)
