"""The `run` and chat command lines read without argparse give argparse's namespace, or
give up."""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reasonix.cli import flags, run_cmd, tui
from reasonix.cli.argspec import fast_parse, table_spec
from reasonix.cli.flag_parser import add_flags, spec_of

# What the fast reader reads: the one flag table (cli/flags.py), as data.
SPEC = table_spec(flags.RUN)
CHAT_SPEC = table_spec(flags.CHAT)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reasonix run")
    run_cmd.configure(parser)
    return parser


def _argparse(argv: list[str], parser: Callable[[], argparse.ArgumentParser] = _parser) -> Any:
    """argparse's namespace for ``argv`` as a dict, or None when it reports an error (exit 2)."""
    sink = io.StringIO()
    try:
        with contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
            return vars(parser().parse_args(argv))
    except SystemExit:
        return None


def test_the_shipped_spec_is_the_run_parser() -> None:
    """The drift test: what the fast reader makes of the table is what argparse makes of it."""
    assert spec_of(_parser()) == SPEC


def test_the_table_reader_derives_what_argparse_declares_for_every_kind() -> None:
    """Rows the shipped table does not have yet (store_false, a short-only option, two
    exclusive groups interleaved) are read as argparse declares them, too."""
    rows: Any = (
        (("name",), {"nargs": "?"}),
        (("-q",), {"action": "store_false"}),
        (("-x", "--long-one"), {"type": int}),
        (("--mode",), {"exclusive": "a", "action": "store_const", "const": "m"}),
        (("--other",), {"exclusive": "b", "action": "append", "default": []}),
        (("--third",), {"exclusive": "a", "choices": ("u", "v")}),
        (("--fourth",), {"exclusive": "b", "dest": "elsewhere", "action": "store_true"}),
    )
    parser = argparse.ArgumentParser()
    add_flags(parser, rows)
    assert spec_of(parser) == table_spec(rows)


def test_run_and_chat_read_the_shared_flags_alike() -> None:
    argv = ["--model", "m", "-c", "--add-dir", "/a", "--plan-only", "--max-steps", "4"]
    run, chat = vars(fast_parse(SPEC, argv)), vars(fast_parse(CHAT_SPEC, argv))
    shared = {a["dest"] for a in table_spec(flags.SHARED)["actions"]} - {"help"}
    assert {k: run[k] for k in shared} == {k: chat[k] for k in shared}
    assert run["plan_route"] == "plan_only" and run["add_dir"] == ["/a"]


def test_the_usual_command_lines_are_read_as_argparse_reads_them() -> None:
    for argv in (
        ["--json", "-y", "fix add() in calc.py and run its test"],
        ["fix it", "--model", "deepseek", "--max-steps", "3"],
        ["-p", "say hi", "--output-format", "stream-json"],
        ["-c", "--add-dir", "/tmp/a", "--add-dir=/tmp/b", "go on"],
        ["--plan-only", "--permission-mode", "plan", "draft it"],
        ["-r", "--print"],
        [],
    ):
        fast = fast_parse(SPEC, argv)
        assert fast is not None, argv
        assert vars(fast) == _argparse(argv), argv


def test_what_it_does_not_read_it_leaves_to_argparse() -> None:
    for argv in (
        ["-h"],
        ["--jso", "x"],  # an abbreviation argparse would accept
        ["-yc", "x"],  # combined short flags
        ["--", "-x"],
        ["--max-steps", "-1"],  # a negative number as a value
        ["--model", "-"],
        ["--plan", "--plan-only"],  # an exclusive group twice: argparse's error
        ["--max-steps", "many"],
        ["--output-format", "yaml"],
        ["one", "two"],
        ["--json=yes"],
        ["--unknown"],
    ):
        assert fast_parse(SPEC, argv) is None, argv


_OPTIONS = sorted({o for a in SPEC["actions"] for o in a["options"]})  # type: ignore[index,union-attr]
_TOKENS = st.one_of(
    st.sampled_from(_OPTIONS),
    st.sampled_from(["task", "fix it", "", "-", "--", "-1", "3", "json", "text", "plan",
                     "stream-json", "--jso", "--mod", "-yc", "-x", "x=y", "--model=m",
                     "--max-steps=7", "--max-steps=", "--print=", "--resume=q", "-p=x",
                     "--output-format=json", "--add-dir=/a", "é", "--json=1"]),
    st.text(alphabet=st.sampled_from(list("ab -=1/")), max_size=6),
)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(_TOKENS, max_size=7))
def test_it_agrees_with_argparse_on_any_command_line(argv: list[str]) -> None:
    fast = fast_parse(SPEC, argv)
    if fast is None:
        return
    assert vars(fast) == _argparse(argv), argv


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=6))
def test_any_command_line_is_read_or_left_to_argparse(argv: list[str]) -> None:
    """Arbitrary words never make the fast reader raise; what it reads, argparse reads alike."""
    fast = fast_parse(SPEC, argv)
    if fast is not None:
        assert vars(fast) == _argparse(argv), argv


# The chat (``reasonix`` with no command) is read the same way: its first frame waits for it.


def _chat_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reasonix")
    tui.configure(parser)
    return parser


def _chat_argparse(argv: list[str]) -> Any:
    return _argparse(argv, _chat_parser)


def test_the_shipped_chat_spec_is_the_chat_parser() -> None:
    assert spec_of(_chat_parser()) == CHAT_SPEC


def test_the_usual_chat_command_lines_are_read_as_argparse_reads_them() -> None:
    for argv in ([], ["-c"], ["--plain"], ["-r", "20261201-1"], ["--model", "m", "--plain"]):
        fast = fast_parse(CHAT_SPEC, argv)
        assert fast is not None, argv
        assert vars(fast) == _chat_argparse(argv), argv
    for argv in (["-h"], ["--pla"], ["--plain", "--unknown"], ["-cy"]):
        assert fast_parse(CHAT_SPEC, argv) is None, argv


_CHAT_OPTIONS = sorted({o for a in CHAT_SPEC["actions"] for o in a["options"]})  # type: ignore[index,union-attr]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_CHAT_OPTIONS), _TOKENS), max_size=7))
def test_the_chat_reader_agrees_with_argparse_on_any_command_line(argv: list[str]) -> None:
    fast = fast_parse(CHAT_SPEC, argv)
    if fast is not None:
        assert vars(fast) == _chat_argparse(argv), argv
