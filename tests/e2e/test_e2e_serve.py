"""`reasonix.pyz serve`: the page comes out of the archive and a scripted turn streams,
on the oldest and newest supported Python, unpacked and straight from the zip."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from e2e_python import interpreter
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, Turn

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "reasonix" / "serve" / "static"


def _call(port: int, method: str, path: str, headers: dict[str, str], body: Any = None) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    return resp.status, raw, resp


@pytest.mark.e2e
@pytest.mark.parametrize(("minor", "zipped"), [("3.10", True), ("3.13", False)])
def test_pyz_serves_the_page_and_a_turn(pyz: Path, tmp_path: Path, minor: str, zipped: bool):
    python = interpreter(minor)
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    if zipped:
        env["REASONIX_NO_UNPACK"] = "1"  # importlib.resources reads from inside the zip
    with FakeServer("openai", [Turn.text_only("hello from the archive")]) as srv:
        write_project(ws, srv.url)
        proc = subprocess.Popen(
            [python, str(pyz), "serve", "--port", "0", "--auth-mode", "token"],
            cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:") and "#token=" in url, proc.stderr
            port = int(url.split(":")[2].split("/")[0])
            token = url.split("#token=")[1]
            base = {"Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}"}
            # every ES module the page imports, not only the entry (app.js)
            for name in ("index.html", "app.css", *sorted(p.name for p in STATIC.glob("*.js"))):
                path = "/" if name == "index.html" else f"/static/{name}"
                status, raw, _ = _call(port, "GET", path, base)
                assert status == 200 and raw == (STATIC / name).read_bytes()
            hello = json.loads(_call(port, "GET", "/api/hello", base)[1])
            auth = {**base, "Authorization": f"Bearer {token}", "X-Reasonix-CSRF": hello["csrf"],
                    "Content-Type": "application/json"}  # fmt: skip
            status, raw, _ = _call(port, "POST", "/api/sessions", auth, {})
            assert status == 201, raw
            sid = json.loads(raw)["id"]
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", f"/api/sessions/{sid}/events?after=0", headers=auth)
            stream = conn.getresponse()
            assert (
                _call(port, "POST", f"/api/sessions/{sid}/prompt", auth, {"text": "hi"})[0] == 200
            )
            text = ""
            while True:
                line = stream.fp.readline().decode()
                assert line, "stream ended early"
                if line.startswith("data: "):
                    ev = json.loads(line[6:])
                    text += ev["text"] if ev["type"] == "text" else ""
                    if ev["type"] == "turn" and ev["state"] == "end":
                        break
            conn.close()
            assert text == "hello from the archive"
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "Traceback" not in err and token not in err
