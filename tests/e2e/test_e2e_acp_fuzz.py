"""200 malformed or hostile lines on ``reasonix acp``'s stdin: errors, never a crash.

Every line that JSON-RPC answers (unreadable input, invalid requests, requests
with an id) gets exactly one error response; notifications get none; stdout
carries nothing but valid JSON-RPC 2.0 messages; stderr shows no traceback;
closing stdin ends the process with 0.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import clean_env, write_project

SEED = 16


def hostile_lines(ws: Path, count: int = 200) -> list[tuple[bytes, bool]]:
    """(line, expects an answer) pairs, deterministic for the seed."""
    rng = random.Random(SEED)
    methods = [
        "initialize",
        "session/new",
        "session/load",
        "session/prompt",
        "session/cancel",
        "session/set_mode",
        "session/set_config_option",
        "authenticate",
        "session/close",
        "fs/read_text_file",
        "no/such",
        "",
        "__proto__",
        "$/cancel_request",
        "x" * 5000,
    ]
    junk: list[Any] = [
        None,
        True,
        0,
        -1,
        2**70,
        1.5,
        "",
        "x" * 1000,
        [],
        {},
        [1, [2]],
        {"a": {"b": None}},
        "\u0000\udcff",
        "🙂" * 50,
        "../../etc/passwd",
    ]
    out: list[tuple[bytes, bool]] = []
    while len(out) < count:
        kind = rng.randrange(12)
        if kind == 0:  # raw bytes, invalid UTF-8 and NULs included
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
            data = data.replace(b"\n", b" ").replace(b"\r", b" ")
            out.append((data, data.strip() != b""))
        elif kind == 1:  # a valid request cut short
            text = json.dumps({"jsonrpc": "2.0", "id": len(out), "method": rng.choice(methods)})
            out.append((text[: rng.randrange(1, len(text) - 1)].encode(), True))
        elif kind == 2:  # nested far too deep for any parser
            depth = rng.choice([1000, 50000, 200000])
            out.append((b"[" * depth + b"]" * depth, True))
        elif kind == 3:  # JSON that is no object: a batch, a number, a string …
            out.append(
                (
                    json.dumps(rng.choice([[], [{"jsonrpc": "2.0"}], 5, "s", None, True])).encode(),
                    True,
                )
            )
        elif kind == 4:  # a request with the wrong jsonrpc member
            msg = {"jsonrpc": rng.choice(["1.0", 2, None]), "id": len(out), "method": "initialize"}
            out.append((json.dumps(msg).encode(), True))
        elif kind == 5:  # bad ids
            msg = {
                "jsonrpc": "2.0",
                "id": rng.choice([{"x": 1}, [1], True]),
                "method": "initialize",
            }
            out.append((json.dumps(msg).encode(), True))
        elif kind == 6:  # known and unknown methods with junk params
            params = {
                k: rng.choice(junk)
                for k in rng.sample(
                    [
                        "sessionId",
                        "cwd",
                        "prompt",
                        "mcpServers",
                        "modeId",
                        "protocolVersion",
                        "configId",
                        "value",
                        "methodId",
                        "path",
                    ],
                    rng.randrange(0, 5),
                )
            }
            msg = {
                "jsonrpc": "2.0",
                "id": f"fuzz-{len(out)}",
                "method": rng.choice(methods),
                "params": params,
            }
            out.append((json.dumps(msg).encode(), True))
        elif kind == 7:  # params of the wrong type
            msg = {
                "jsonrpc": "2.0",
                "id": len(out),
                "method": rng.choice(methods),
                "params": rng.choice(["str", 3, True]),
            }
            out.append((json.dumps(msg).encode(), True))
        elif kind == 8:  # notifications: never answered, whatever they hold
            msg = {"jsonrpc": "2.0", "method": rng.choice(methods), "params": rng.choice(junk)}
            out.append((json.dumps(msg).encode(), False))
        elif kind == 9:  # answers to requests we never made
            msg = {
                "jsonrpc": "2.0",
                "id": rng.randrange(1000),
                rng.choice(["result", "error"]): rng.choice(junk),
            }
            out.append((json.dumps(msg).encode(), False))
        elif kind == 10:  # hostile session requests with real-looking values
            msg = {
                "jsonrpc": "2.0",
                "id": len(out),
                "method": "session/new",
                "params": {
                    "cwd": rng.choice(["/", "/nonexistent", str(ws) + "/../..", "rel"]),
                    "mcpServers": rng.choice(
                        [[{"name": "x", "command": 5}], "no", [{"type": "ftp", "name": "y"}]]
                    ),
                },
            }
            out.append((json.dumps(msg).encode(), True))
        else:  # a blank or whitespace line: skipped silently
            out.append((rng.choice([b"", b"   ", b"\t"]), False))
    return out


@pytest.mark.e2e
def test_hostile_stdin_gets_errors_and_no_crash(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    write_project(ws, "http://127.0.0.1:9")  # never reached: no prompt can get that far
    lines = hostile_lines(ws)
    expected = sum(1 for _, answered in lines if answered)
    stdin = b"".join(line + b"\n" for line, _ in lines)
    proc = subprocess.run(
        [sys.executable, str(pyz), "acp"],
        input=stdin,
        cwd=ws,
        env=clean_env(tmp_path, source_tree=False),
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert b"Traceback" not in proc.stderr
    responses = []
    for raw in proc.stdout.splitlines():
        message = json.loads(raw)  # every stdout line is one JSON message
        assert message.get("jsonrpc") == "2.0"
        if "method" in message:
            continue  # an update for a session that got built (none should, but legal)
        assert "id" in message and (("result" in message) != ("error" in message))
        if "error" in message:
            assert isinstance(message["error"]["code"], int)
            assert isinstance(message["error"]["message"], str)
        responses.append(message)
    assert len(responses) == expected
    assert all("error" in r for r in responses if r["id"] is None)
    codes = {r["error"]["code"] for r in responses if "error" in r}
    assert {-32700, -32600, -32601, -32602} <= codes
