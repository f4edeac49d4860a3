"""``reasonix acp`` entry: stdout belongs to the protocol; strays go to stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

STRAYS = """
import os, subprocess, sys
from reasonix.cli.acp_cmd import _take_stdio
proto_in, proto_out = _take_stdio()
print("stray print")
os.write(1, b"stray fd 1\\n")
subprocess.run(["sh", "-c", "echo stray child; cat"], check=True)  # inherits fds 0 and 1
proto_out.write(b"protocol line\\n")
proto_out.write(proto_in.read())
"""


def test_take_stdio_keeps_stdout_for_the_protocol() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", STRAYS],
        input=b"client bytes\n",
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"protocol line\nclient bytes\n"  # the child's cat read nothing
    for stray in (b"stray print", b"stray fd 1", b"stray child"):
        assert stray in proc.stderr


def test_reasonix_acp_answers_and_exits_zero_on_eof(tmp_path: Path) -> None:
    line = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    proc = subprocess.run(
        [sys.executable, "-m", "reasonix", "acp"],
        input=json.dumps(line).encode() + b"\nnot json\n",
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(x) for x in proc.stdout.splitlines()]
    assert replies[0]["result"]["agentInfo"]["name"] == "reasonix"
    assert replies[1]["error"]["code"] == -32700
    help_text = subprocess.run(
        [sys.executable, "-m", "reasonix", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    ).stdout
    assert "acp" in help_text
