"""Issue 12 item 5: untrusted text never reaches the terminal as live escape sequences.

The sanitiser itself over every family of terminal controls, then the real
frontends (``run`` text mode, ``-p``, the structured modes, the line chat and
the CLI error boundary) against a fake model that answers with hostile text.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn
from hypothesis import given
from hypothesis import strategies as st

from reasonix.cli.safe_text import json_line, printable

ROOT = Path(__file__).resolve().parents[2]

# Everything a terminal could interpret: C0 but TAB/LF, DEL, C1, bidi controls.
LIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

HOSTILE = {
    "osc title + clear": "\x1b]0;PWNED\x07\x1b[2J",
    "osc 52 clipboard": "\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "csi colour": "\x1b[31mred\x1b[0m",
    "osc 8 hyperlink": "\x1b]8;;http://evil.invalid\x1b\\click\x1b]8;;\x1b\\",
    "c1 csi": "\x9b2J",
    "c1 osc": "\x9d0;T\x9c",
    "dcs": "\x1bP+q544e\x1b\\",
    "backspace overwrite": "safe\x08\x08\x08\x08evil",
    "carriage return overwrite": "rm -rf /\rls     ",
    "nul and bell": "a\x00b\x07",
    "delete": "x\x7fy",
    "bidi override": "abc\u202edcba\u202c",
    "bidi isolate": "\u2066x\u2069",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_every_control_family_is_shown_not_interpreted(name: str) -> None:
    text = HOSTILE[name]
    for keep in (True, False):
        shown = printable(text, keep_newlines=keep)
        assert LIVE.search(shown) is None, (name, shown)
        assert shown != text  # something visible stands in for the control


def test_esc_is_written_as_backslash_x1b() -> None:
    assert printable("\x1b]0;PWNED\x07") == "\\x1b]0;PWNED\\x07"
    assert printable("\u202e") == "\\u202e"
    assert printable("bad\udcffbyte") == "bad\\udcffbyte"


def test_newlines_and_tabs_kept_or_flattened() -> None:
    assert printable("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert printable("a\tb\nc", keep_newlines=False) == "a\\tb\\nc"
    assert printable("lone\rcr") == "lone\\rcr"


@pytest.mark.parametrize(
    "text",
    ["plain ascii", "中文字符与标点，。", "emoji 👨‍👩‍👧 ❤️ 🇨🇳", "ñ é ü ß", "tab\tand\nnewline",
     "backslash \\x1b stays", ""],
)  # fmt: skip
def test_printable_unicode_is_untouched(text: str) -> None:
    assert printable(text) == text


@given(st.text())
def test_no_input_leaves_a_live_control(text: str) -> None:
    assert LIVE.search(printable(text)) is None
    assert LIVE.search(printable(text, keep_newlines=False)) is None
    assert re.search("[\t\n]", printable(text, keep_newlines=False)) is None
    line = json_line({"t": text})
    assert LIVE.search(line) is None and "\n" not in line
    assert json.loads(line) == {"t": text}  # JSON keeps the text itself


# -- the frontends -------------------------------------------------------------------

EVIL = "\x1b]0;PWNED\x07\x1b[2J\x9b31m\x1b]52;c;cHduZWQ=\x07"


def _project(tmp_path: Path, url: str) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "repo"
    ws.mkdir()
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n\n[[providers]]\nname = "fake"\n'
        f'kind = "openai"\nbase_url = "{url}"\nmodels = ["fake-model"]\n'
        'api_key_env = "FAKE_PROVIDER_KEY"\n'
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "REASONIX_TRUST_WORKSPACE": "1",  # the test wrote this workspace itself
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "REASONIX_HOME": str(tmp_path / "rx"),
        "FAKE_PROVIDER_KEY": "sk-fake",
        "PYTHONPATH": str(ROOT),
    }
    return ws, env


def _reasonix(
    ws: Path, env: dict[str, str], *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "reasonix", *args],
        cwd=ws,
        env=env,
        input=stdin.encode(),
        capture_output=True,
        timeout=60,
    )


def _script() -> list[Turn]:
    # A tool call whose argument (a path) and error carry escapes, then a hostile answer.
    args = json.dumps({"path": f"missing{EVIL}.txt"})
    return [Turn.tools([ToolSpec("read_file", args)]), Turn(text=[f"answer {EVIL} done"])]


def _assert_inert(data: bytes) -> None:
    assert b"\x1b" not in data and b"\x07" not in data
    assert "\x9b" not in data.decode("utf-8", "replace")


@pytest.mark.parametrize("mode", [[], ["-p"]])
def test_run_text_and_print_mode_show_escapes_visibly(tmp_path: Path, mode: list[str]) -> None:
    with FakeServer("openai", _script()) as srv:
        ws, env = _project(tmp_path, srv.url)
        proc = _reasonix(ws, env, "run", *mode, "go")
    assert proc.returncode == 0, proc.stderr
    _assert_inert(proc.stdout)
    _assert_inert(proc.stderr)
    assert b"answer \\x1b]0;PWNED\\x07" in proc.stdout
    if not mode:
        assert b"\\x1b" in proc.stderr  # the tool error names the hostile path, visibly


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_structured_modes_keep_the_text_but_print_no_raw_control(tmp_path: Path, fmt: str) -> None:
    with FakeServer("openai", _script()) as srv:
        ws, env = _project(tmp_path, srv.url)
        proc = _reasonix(ws, env, "run", "--output-format", fmt, "go")
    assert proc.returncode == 0, proc.stderr
    _assert_inert(proc.stdout)
    last = json.loads(proc.stdout.decode().splitlines()[-1])
    assert last["result"] == f"answer {EVIL} done"  # the text itself survives the round trip


def test_line_chat_shows_escapes_visibly(tmp_path: Path) -> None:
    with FakeServer("openai", _script()) as srv:
        ws, env = _project(tmp_path, srv.url)
        proc = _reasonix(ws, env, "--plain", stdin="go\n/exit\n")
    assert proc.returncode == 0, proc.stderr
    _assert_inert(proc.stdout)
    _assert_inert(proc.stderr)
    assert b"answer \\x1b]0;PWNED" in proc.stdout
    assert b"missing\\x1b]0;PWNED" in proc.stdout  # the tool line names the path visibly


@pytest.mark.parametrize("command", [["run", "--dir"], ["memory", "--dir"]])
def test_error_boundary_shows_a_hostile_path_visibly(tmp_path: Path, command: list[str]) -> None:
    ws, env = _project(tmp_path, "http://127.0.0.1:9")
    proc = _reasonix(ws, env, *command, f"gone{EVIL}", *(["go"] if command[0] == "run" else []))
    assert proc.returncode == 2
    _assert_inert(proc.stderr)
    assert b"gone\\x1b]0;PWNED" in proc.stderr


_UNSAFE_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"


def _printable_by_pattern(text: str, keep_newlines: bool) -> str:
    """The sanitiser as one regular expression, without the ASCII fast path."""

    def shown(ch: str) -> str:
        named = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
        return named.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")

    if keep_newlines:
        pattern = re.compile(f"\r\n|[{_UNSAFE_CLASS}]")
        return pattern.sub(lambda m: "\n" if m.group() == "\r\n" else shown(m.group()), text)
    return re.compile(f"[{_UNSAFE_CLASS}\t\n]").sub(lambda m: shown(m.group()), text)


@given(st.text(alphabet=st.characters(max_codepoint=0xA0) | st.sampled_from("\u202e\u2067é中")))
def test_the_ascii_fast_path_changes_nothing(text: str) -> None:
    for keep in (True, False):
        assert printable(text, keep_newlines=keep) == _printable_by_pattern(text, keep)
    line = json.dumps({"t": text}, ensure_ascii=False)
    unsafe = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
    assert json_line({"t": text}) == unsafe.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
