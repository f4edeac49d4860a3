"""Which chat runs (the curses view or line mode), its flags, and the per-project history."""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path

import pytest

from reasonix.cli import chat_cmd, tui
from reasonix.cli.tui.history import KEEP, PromptHistory, history_path


def _options(configure: object) -> set[str]:
    parser = argparse.ArgumentParser()
    configure(parser)  # type: ignore[operator]
    return {s for a in parser._actions for s in a.option_strings}


def test_the_view_and_line_mode_take_the_same_flags() -> None:
    assert _options(tui.configure) == _options(chat_cmd.configure)


def test_line_mode_for_plain_dumb_terminals_and_pipes(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = argparse.Namespace(plain=True)
    fancy = argparse.Namespace(plain=False)
    assert not tui.wants_view(plain, {"TERM": "xterm"})
    assert not tui.wants_view(fancy, {"TERM": "dumb"})
    assert not tui.wants_view(fancy, {})
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal
    assert not tui.wants_view(fancy, {"TERM": "xterm"})


def test_the_view_when_both_ends_are_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    try:
        with open(slave, closefd=False) as inp, open(slave, "w", closefd=False) as out:
            monkeypatch.setattr(sys, "stdin", inp)
            monkeypatch.setattr(sys, "stdout", out)
            assert tui.wants_view(argparse.Namespace(plain=False), {"TERM": "xterm-256color"})
    finally:
        os.close(master)
        os.close(slave)


def test_history_is_per_project_and_keeps_multi_line_prompts(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert history_path(a) != history_path(b)
    assert str(history_path(a)).startswith(os.environ["REASONIX_HOME"])
    h = PromptHistory(history_path(a))
    h.add("first")
    h.add("two\nlines 中文")
    h.add("   ")  # blank prompts are not kept
    assert PromptHistory(history_path(a)).load() == ["first", "two\nlines 中文"]
    assert PromptHistory(history_path(b)).load() == []


def test_history_trims_itself_and_survives_a_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    h = PromptHistory(path)
    for i in range(2 * KEEP + 1):
        h.add(f"p{i}")
    kept = PromptHistory(path).load()
    assert len(kept) == KEEP and kept[-1] == f"p{2 * KEEP}"
    assert len(path.read_text().splitlines()) <= 2 * KEEP
    path.write_bytes(b'"ok"\nnot json\n\xff\xfe\n')
    assert PromptHistory(path).load() == ["ok"]
    blocked = PromptHistory(tmp_path / "file" / "h.jsonl")
    (tmp_path / "file").write_text("a file, not a directory")
    blocked.add("lost, but no crash")
    assert blocked.load() == []


def test_the_first_frame_needs_no_heavy_module() -> None:
    """Issue 20: what runs before the first paint imports neither the runtime nor dataclasses;
    issue 38: nor typing (with re and enum behind it)."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import reasonix.cli.main, reasonix.cli.tui, reasonix.cli.tui.app\n"
        "import reasonix.cli.trust_prompt, reasonix.config.trust_store\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code, str(root)], capture_output=True, text=True, check=True
    )
    loaded = set(out.stdout.split())
    heavy = {"dataclasses", "inspect", "difflib", "json", "pathlib", "reasonix.boot",
             "reasonix.agent", "reasonix.provider", "reasonix.command", "reasonix.cli.chat_cmd",
             "reasonix.cli.tui.ingest", "reasonix.cli.safe_text", "reasonix.cli.tui.live",
             "typing", "re", "enum", "argparse"}  # fmt: skip
    assert not heavy & loaded, sorted(heavy & loaded)
    assert "curses" in loaded


def test_stray_stderr_and_dying_threads_become_notices() -> None:
    import threading

    from reasonix.cli.tui.guard import Diverted

    posted: list[tuple[str, ...]] = []

    class Inbox:  # what Diverted needs of the app: post(kind, *payload)
        def post(self, kind: str, *payload: str) -> None:
            posted.append((kind, *payload))

    out = Diverted(Inbox().post)
    out.write("warning: part")
    assert posted == []
    out.write("ial\n\nsecond\n")
    assert posted == [("notice", "warning: partial", "warn"), ("notice", "second", "warn")]
    saved = threading.excepthook
    threading.excepthook = out.thread_died
    try:
        t = threading.Thread(target=lambda: 1 / 0, name="worker-x")
        t.start()
        t.join()
    finally:
        threading.excepthook = saved
    assert posted[-1] == ("notice", "worker-x failed: ZeroDivisionError: division by zero", "error")


def test_a_fifo_in_place_of_the_history_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "h.jsonl")
    assert PromptHistory(tmp_path / "h.jsonl").load() == []
