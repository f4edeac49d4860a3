"""Shared parts of the serve tests: a workspace on a fake model, a plain HTTP client,
an SSE reader, and `reasonix serve` as a real subprocess."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fakes import ToolSpec, Turn
from usage_kit import DAY1, DAY2, usage_session

ROOT = Path(__file__).resolve().parents[2]
CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('calc test ok')\n"
USAGE = {"input_tokens": 900, "output_tokens": 30, "cache_read_tokens": 600,
         "cache_write_tokens": 0, "reasoning_tokens": 0}  # fmt: skip
FIX = '{"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}'


def write_workspace(ws: Path, url: str, *, extra: str = "", kind: str = "openai") -> Path:
    """A project on the fake provider at ``url`` with the calc task's files.

    ``extra`` is appended; text before its first table header still belongs to
    the provider (``web_search = true``).
    """
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n\n[[providers]]\nname = "fake"\n'
        f'kind = "{kind}"\nbase_url = "{url}"\nmodels = ["fake-model"]\n'
        'api_key_env = "FAKE_PROVIDER_KEY"\ncontext_window = 131072\n' + extra
    )
    (ws / "calc.py").write_text(CALC)
    (ws / "test_calc.py").write_text(TEST)
    return ws


def allow_test_run(python: str = sys.executable) -> str:
    """A [permissions] table that lets the task's test command run without a question."""
    return f'\n[permissions]\nallow = ["Bash({python} test_calc.py)"]\n'


def task_script(python: str = sys.executable, *, drip: float = 0.0) -> list[Turn]:
    """read -> edit (one approval) -> run the test -> answer."""
    cmd = json.dumps({"command": f"{python} test_calc.py", "justification": "run the test"})
    return [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')], text="Reading calc.py first.",
                   delay=drip),
        Turn.tools([ToolSpec("edit_file", FIX)], text="The bug: add subtracts."),
        Turn.tools([ToolSpec("bash", cmd)]),
        Turn.text_only("Fixed **add()** in `calc.py`; the test passes.",
                       usage=USAGE),
    ]  # fmt: skip


def env_for(tmp: Path) -> dict[str, str]:
    """A clean environment for a `reasonix` subprocess (fresh home, the fake key)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "REASONIX_TRUST_WORKSPACE": "1",  # the test wrote this workspace itself
        "HOME": str(tmp),
        "LANG": "C.UTF-8",
        "REASONIX_HOME": os.environ.get("REASONIX_HOME", str(tmp / "rx")),
        "FAKE_PROVIDER_KEY": "sk-fake",
        "PYTHONPATH": str(ROOT),
    }


class Client:
    """A plain HTTP client that speaks to one server like the page does."""

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        self.port, self.host = port, host
        self.headers: dict[str, str] = {
            "Host": f"{host}:{port}",
            "Origin": f"http://{host}:{port}",
        }
        self.csrf = ""

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, dict[str, Any], http.client.HTTPResponse]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=20)
        send = dict(self.headers)
        if method != "GET":
            send["Content-Type"] = "application/json"
            if self.csrf:
                send["X-Reasonix-CSRF"] = self.csrf
        send.update(headers or {})
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if method != "GET" and data is None:
            data = b"{}"
        conn.request(method, path, body=data, headers={k: v for k, v in send.items() if v})
        resp = conn.getresponse()
        text = resp.read()
        conn.close()
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            value = {"raw": text.decode("utf-8", "replace")}
        return resp.status, value, resp

    def hello(self) -> dict[str, Any]:
        status, value, _ = self.request("GET", "/api/hello")
        assert status == 200, value
        self.csrf = value["csrf"]
        return value

    def login(self, secret: str) -> int:
        status, _, resp = self.request("POST", "/api/login", {"secret": secret})
        cookie = resp.getheader("Set-Cookie") or ""
        if status == 200 and cookie:
            self.headers["Cookie"] = cookie.split(";")[0]
        return status

    def post(self, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
        status, value, _ = self.request("POST", path, body if body is not None else {})
        return status, value

    def get(self, path: str) -> tuple[int, dict[str, Any]]:
        status, value, _ = self.request("GET", path)
        return status, value

    def new_session(self) -> str:
        status, value = self.post("/api/sessions")
        assert status == 201, value
        return str(value["id"])

    def events(self, sid: str, after: int | None = 0, last_id: str | None = None) -> SseStream:
        return SseStream(self, sid, after, last_id)


class SseStream:
    """A raw SSE connection: yields (id, event dict) in arrival order."""

    def __init__(self, client: Client, sid: str, after: int | None, last_id: str | None) -> None:
        self.conn = http.client.HTTPConnection(client.host, client.port, timeout=30)
        headers = {k: v for k, v in client.headers.items() if v}
        if last_id is not None:
            headers["Last-Event-ID"] = last_id
        query = "" if after is None else f"?after={after}"
        self.conn.request("GET", f"/api/sessions/{sid}/events{query}", headers=headers)
        self.resp = self.conn.getresponse()
        self.raw: list[bytes] = []

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        event_id, data = "", []
        while True:
            line = self.resp.fp.readline()
            if not line:
                return
            self.raw.append(line)
            text = line.decode("utf-8").rstrip("\n")
            if text.startswith("id: "):
                event_id = text[4:]
            elif text.startswith("data: "):
                data.append(text[6:])
            elif text == "" and data:
                yield event_id, json.loads("\n".join(data))
                event_id, data = "", []

    def until(self, predicate: Any, timeout: float = 20) -> list[dict[str, Any]]:
        """Events up to and including the first one ``predicate`` accepts."""
        seen: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        for event_id, ev in self:
            assert event_id == str(ev["seq"]), (event_id, ev)
            seen.append(ev)
            if predicate(ev):
                return seen
            assert time.monotonic() < deadline, seen
        raise AssertionError(f"stream ended before the expected event: {seen}")

    def close(self) -> None:
        self.conn.close()


def turn_end(ev: dict[str, Any]) -> bool:
    return ev.get("type") == "turn" and ev.get("state") == "end"


@contextlib.contextmanager
def running(ws: Path, **settings: Any) -> Iterator[Any]:
    """An in-process server on a free loopback port (``shutdown(); join()`` on exit)."""
    from reasonix.serve.server import ServeApp, ServeSettings

    lines: list[str] = []
    app = ServeApp(ServeSettings(workspace=ws, **settings), log=lines.append)
    app.lines = lines  # type: ignore[attr-defined]
    app.start()
    try:
        yield app
    finally:
        app.close()


class ServeProcess:
    """`python -m reasonix serve …` in ``ws``; ``url`` is its first stdout line."""

    def __init__(self, ws: Path, tmp: Path, *args: str, stdin: str | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reasonix", "serve", "--port", "0", *args],
            cwd=ws, env=env_for(tmp), stdin=subprocess.PIPE if stdin is not None else None,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url:
            self.proc.wait(10)
            raise AssertionError(f"serve did not start: {self.proc.stderr.read()}")  # type: ignore[union-attr]
        hostport = self.url.split("//", 1)[1].split("/", 1)[0]
        self.port = int(hostport.rsplit(":", 1)[1])

    def stop(self, timeout: float = 30) -> tuple[int, str, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err


# -- recorded usage for the Usage view (issue 36) -------------------------------------------
def record_sessions(ws: Path, other: Path) -> str:
    """Usage records as runs leave them, under this test's REASONIX_HOME: a priced and an
    unpriced model on two days, a sub-agent of the priced session, and another project.

    Returns the priced parent session's id (the top session by cost)."""
    from reasonix.provider.types import Usage

    home = Path(os.environ["REASONIX_HOME"])
    (home / "config.toml").write_text(
        '[[providers]]\nname = "local"\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'models = ["priced", "free"]\n'
        "[providers.prices]\npriced = { input = 1.0, output = 2.0, cache_read = 0.5 }\n"
    )
    a = usage_session(ws, "local/priced", [
        (DAY1, Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=600)),
        (DAY2, Usage(input_tokens=2000, output_tokens=200, reasoning_tokens=20)),
    ])  # fmt: skip
    usage_session(ws, "local/free", [(DAY2, Usage(input_tokens=500, output_tokens=50))])
    usage_session(ws, "local/priced", [(DAY2, Usage(input_tokens=300, output_tokens=30))],
                   subagent={"profile": "explore", "depth": 1, "parent_session": a})  # fmt: skip
    usage_session(other, "local/priced", [(DAY1, Usage(input_tokens=10, output_tokens=1))])
    return a
