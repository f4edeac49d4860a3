"""Key scripts replayed against the view state: what each key does and which action it asks for.

The command registry here is a tiny in-test object of the registry's shape
(TEAM API: is_command, run, complete, notices); the tmux tests drive the real one.
"""

from __future__ import annotations

from typing import Any

from reasonix.cli.tui.bridge import Commands
from reasonix.cli.tui.control import Controls
from reasonix.cli.tui.keys import KeyDecoder
from reasonix.cli.tui.state import (
    ApprovalOverlay,
    AppState,
    CompletionOverlay,
    ConfirmOverlay,
    PickerItemView,
    PickerOverlay,
)
from reasonix.command.api import CommandResult, Completion
from reasonix.permission import ApprovalChoice


class Registry:
    """The command registry's shape, with three commands."""

    notices = ["skipped bad.md: no closing ---"]
    table = {"/help": "list the commands", "/model": "switch model", "/mcp": "MCP servers"}

    def is_command(self, line: str) -> bool:
        return line.startswith("/") and not line.startswith("//")

    def run(self, line: str) -> CommandResult:
        return CommandResult(text=f"ran {line}")

    def complete(self, prefix: str) -> list[Completion]:
        return [Completion(k, v) for k, v in self.table.items() if k.startswith(prefix)]


def refs(word: str) -> list[tuple[str, str]]:
    tree = {"@": ["@src/", "@README.md"], "@src/": ["@src/app.py", "@src/lib/"]}
    base = word if word in tree else word.rsplit("/", 1)[0] + "/" if "/" in word else "@"
    return [(t, "") for t in tree.get(base, []) if t.startswith(word)]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(**kw: Any) -> tuple[AppState, Controls, list[str]]:
    state = AppState()
    saved: list[str] = []
    commands = Commands(None, registry=Registry())
    controls = Controls(
        state, complete_slash=commands.complete, complete_ref=refs, remember=saved.append, **kw
    )
    return state, controls, saved


def play(controls: Controls, data: str) -> list[tuple[Any, ...]]:
    """Feed raw terminal input (as tmux would send it) and collect the actions."""
    decoder = KeyDecoder()
    actions: list[tuple[Any, ...]] = []
    for key in decoder.feed(data) + decoder.flush():
        actions += controls.key(key)
    return actions


def test_typing_and_enter_submits_and_remembers() -> None:
    state, c, saved = make()
    assert play(c, "hello 世界") == []
    assert state.composer.text == "hello 世界"
    assert play(c, "\r") == [("submit", "hello 世界")]
    assert state.composer.text == "" and saved == ["hello 世界"]


def test_ctrl_j_alt_enter_and_paste_make_newlines() -> None:
    state, c, _ = make()
    play(c, "a\nb\x1b\rc\x1b[200~p1\r\np2\x1b[201~")
    assert state.composer.text == "a\nb\nc" + "p1\np2"
    assert play(c, "\r") == [("submit", "a\nb\ncp1\np2")]


def test_history_up_down_keeps_the_draft() -> None:
    state, c, _ = make()
    state.composer.history = ["first", "second"]
    play(c, "draft")
    play(c, "\x1b[A")
    assert state.composer.text == "second"
    play(c, "\x1b[A\x1b[A")
    assert state.composer.text == "first"
    play(c, "\x1b[B\x1b[B")
    assert state.composer.text == "draft"


def test_up_moves_between_lines_before_it_browses_history() -> None:
    state, c, _ = make()
    state.composer.history = ["old"]
    play(c, "line one\nline two")
    play(c, "\x1b[A")
    assert state.composer.text == "line one\nline two" and state.composer.cursor == 8
    play(c, "\x1b[A")
    assert state.composer.text == "old"


def test_readline_keys() -> None:
    state, c, _ = make()
    play(c, "git commit -m msg")
    play(c, "\x17")  # Ctrl-W
    assert state.composer.text == "git commit -m "
    play(c, "\x01")  # Ctrl-A
    assert state.composer.cursor == 0
    play(c, "\x1bf")  # Alt-F
    assert state.composer.cursor == 3
    play(c, "\x0b")  # Ctrl-K
    assert state.composer.text == "git"
    play(c, "\x15")  # Ctrl-U
    assert state.composer.text == ""


def test_ctrl_c_clears_then_leaves_on_a_second_press_only_when_idle() -> None:
    clock = Clock()
    state, c, _ = make(clock=clock)
    play(c, "text")
    assert play(c, "\x03") == [] and state.composer.text == ""
    assert play(c, "\x03") == [] and "again" in state.hint
    clock.now += 0.5
    assert play(c, "\x03") == [("quit",)]
    state2, c2, _ = make(clock=clock)
    play(c2, "\x03")
    clock.now += 10  # too late: arms again instead of leaving
    assert play(c2, "\x03") == []
    state2.busy = "working"
    assert play(c2, "\x03") == [("cancel",)]
    assert play(c2, "\x1b") == [("cancel",)]


def test_ctrl_d_leaves_on_an_empty_composer_and_deletes_otherwise() -> None:
    state, c, _ = make()
    play(c, "ab\x01")
    assert play(c, "\x04") == [] and state.composer.text == "b"
    play(c, "\x15\x0b")
    assert play(c, "\x04") == [("quit",)]


def test_shift_tab_pgup_ctrl_o() -> None:
    state, c, _ = make()
    state.page = 20
    assert play(c, "\x1b[Z") == [("mode",)]
    play(c, "\x1b[5~\x1b[5~")
    assert state.scroll == 36
    play(c, "\x1b[6~")
    assert state.scroll == 18
    play(c, "\x0f")
    assert state.detail is True


def test_submitting_while_busy_keeps_the_text() -> None:
    state, c, _ = make()
    state.busy = "working"
    play(c, "next")
    assert play(c, "\r") == [] and state.composer.text == "next" and "Esc" in state.hint


def _approval(choices: list[ApprovalChoice]) -> ApprovalOverlay:
    keys = {"ONCE": "1", "SESSION": "2", "ALWAYS": "3", "DENY": "4"}
    return ApprovalOverlay(None, None, "allow?", [], ["-a", "+b"],
                           [(keys[ch.name], ch.name.lower(), ch) for ch in choices])  # fmt: skip


def test_approval_keys_are_the_line_modes() -> None:
    for data, want in (("1", "ONCE"), ("2", "SESSION"), ("3", "ALWAYS"), ("4", "DENY"),
                       ("y", "ONCE"), ("n", "DENY"), ("\x1b", "DENY"), ("Y", "ONCE")):  # fmt: skip
        state, c, _ = make()
        o = _approval(list(ApprovalChoice))
        state.overlays.append(o)
        assert play(c, data) == [("answer", o, ApprovalChoice[want])], data


def test_approval_ignores_typing_and_offers_only_allowed_choices() -> None:
    state, c, _ = make()
    o = _approval([ApprovalChoice.ONCE, ApprovalChoice.DENY])
    state.overlays.append(o)
    assert play(c, "x3\r") == []  # "3" is not offered for a fresh request
    assert state.composer.text == ""  # the composer is hidden: keys do not reach it
    play(c, "\x1b[6~")
    assert o.scroll > 0
    assert play(c, "\x03") == [("answer", o, ApprovalChoice.DENY), ("cancel",)]


def test_picker_filters_and_runs_the_command_with_the_value() -> None:
    state, c, _ = make()
    items = [
        PickerItemView("deepseek/chat", "deepseek/chat"),
        PickerItemView("openai/gpt", "openai/gpt"),
    ]
    state.overlays.append(PickerOverlay("model", items, "/model"))
    play(c, "\x1b[B")
    assert play(c, "\r") == [("command", "/model openai/gpt")]
    assert state.overlay is None
    state.overlays.append(PickerOverlay("model", items, "/model"))
    play(c, "deep")
    assert play(c, "\r") == [("command", "/model deepseek/chat")]
    state.overlays.append(PickerOverlay("model", items, "/model"))
    assert play(c, "\x1b") == [] and state.overlay is None


def test_confirm_overlay() -> None:
    state, c, _ = make()
    state.overlays.append(ConfirmOverlay("Clear?", "/clear --yes"))
    assert play(c, "y") == [("command", "/clear --yes")]
    state.overlays.append(ConfirmOverlay("Clear?", "/clear --yes"))
    assert play(c, "n") == [] and state.overlay is None


def test_slash_autocomplete_keeps_the_composer_and_enter_runs_the_choice() -> None:
    state, c, _ = make()
    play(c, "/m")
    o = state.overlay
    assert isinstance(o, CompletionOverlay) and o.kind == "slash"
    assert [t for t, _ in o.items] == ["/model", "/mcp"]
    assert ("/model", "switch model") in o.items
    play(c, "\x1b[B")  # Down selects, it does not browse history
    assert o.selected == 1
    assert play(c, "\r") == [("submit", "/mcp")]


def test_slash_autocomplete_tab_completes_and_esc_dismisses() -> None:
    state, c, _ = make()
    play(c, "/he\t")
    assert state.composer.text == "/help " and state.overlay is None
    play(c, "\x15/h")
    assert isinstance(state.overlay, CompletionOverlay)
    play(c, "\x1b")
    assert state.overlay is None and state.composer.text == "/h"
    play(c, "e")
    assert isinstance(state.overlay, CompletionOverlay)  # new text: candidates again


def test_at_autocomplete_goes_one_directory_level_per_step() -> None:
    state, c, _ = make()
    play(c, "look at @")
    o = state.overlay
    assert isinstance(o, CompletionOverlay) and o.kind == "ref" and o.start == 8
    play(c, "\t")
    assert state.composer.text == "look at @src/"  # a directory: no space, next level opens
    o = state.overlay
    assert isinstance(o, CompletionOverlay) and [t for t, _ in o.items] == [
        "@src/app.py",
        "@src/lib/",
    ]
    play(c, "\r")  # Enter accepts a reference, it does not send
    assert state.composer.text == "look at @src/app.py "
    assert state.overlay is None


def test_an_email_address_opens_no_reference_completion() -> None:
    state, c, _ = make()
    play(c, "mail ann@")
    assert state.overlay is None


def test_the_adapter_reads_the_registry_notices() -> None:
    commands = Commands(None, registry=Registry())
    assert commands.notices == ["skipped bad.md: no closing ---"]
    assert commands.is_command("/help") and not commands.is_command("//not a command")
    assert commands.run("/help").text == "ran /help"


def test_confirm_overlay_with_actions_answers_either_way() -> None:
    state, c, _ = make()
    o = _approval(list(ApprovalChoice))
    yes, no = (
        ("answer", o, ApprovalChoice.ALWAYS, "confirmed"),
        ("answer", o, ApprovalChoice.SESSION),
    )
    state.overlays.append(ConfirmOverlay("save Bash(ls)?", yes=yes, no=no))
    assert play(c, "y") == [yes]
    state.overlays.append(ConfirmOverlay("save Bash(ls)?", yes=yes, no=no))
    assert play(c, "\x1b") == [no] and state.overlay is None


def test_esc_esc_on_an_idle_empty_composer_opens_rewind() -> None:
    now = [100.0]
    state, c, _ = make(clock=lambda: now[0])
    assert play(c, "\x1b") == [] and "rewind" in state.hint
    now[0] += 0.5
    assert play(c, "\x1b") == [("submit", "/rewind")]
    now[0] += 10  # a late second Esc only arms again
    assert play(c, "\x1b") == []
    now[0] += 5
    assert play(c, "\x1b") == []
    play(c, "draft")
    assert play(c, "\x1b") == [] and play(c, "\x1b") == []  # never with text in the composer
