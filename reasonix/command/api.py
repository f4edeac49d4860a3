"""The command layer's contract with its frontends (CMD-1…9, REF-1…7).

Frontends (the line chat, the curses view, ``serve``, ``acp``) hold one
:class:`CommandHost` — implemented over a live runtime in ``reasonix/boot`` —
and hand every line that starts with ``/`` to the command registry. A command
never reaches the model by itself (CMD-1): it returns a :class:`CommandResult`
that says what the frontend should do next — show text, send an expanded
prompt as the user turn (custom commands, MCP prompts), open a picker, ask for
a confirmation, or leave.

This module holds only the data types and Protocols, so every frontend and
the registry can be written against it independently.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from reasonix.lazy import dataclass, field

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CommandHost",
    "CommandResult",
    "CommandTurn",
    "Completion",
    "PickerItem",
]


@dataclass(frozen=True)
class Completion:
    """One autocomplete candidate: what to insert and a one-line description."""

    text: str  # e.g. "/help", "/git:commit", "@src/", "@fs:file:///a.txt"
    description: str = ""


@dataclass(frozen=True)
class PickerItem:
    """One choice of a picker overlay (``/model``, ``/resume`` without an argument)."""

    label: str
    value: str  # passed back as the argument of ``CommandResult.picker_command``
    description: str = ""


@dataclass(frozen=True)
class CommandTurn:
    """What a custom command file asks of the turn it starts (issue 35).

    The frontend runs that turn through ``reasonix.boot.command_turn.run_turn``
    instead of ``runner.run``: ``allow`` (the file's ``allowed-tools``, canonical
    rules) are allow rules for that turn only, and the shell lines of ``prompt``
    (``!`cmd``` and ```` ```! ```` blocks, found again in the turn's text) run
    first through the permission gate and the bash tool's sandbox, their output
    replacing them. A ``project`` command gets neither in an untrusted workspace.
    """

    command: str  # "/commit": named in every notice and refusal
    prompt: str  # the expanded body as the command produced it (before @ references)
    scope: str = "project"  # "project" | "user"
    source: str = ""  # the command file
    allow: tuple[str, ...] = ()
    model: str = ""  # frontmatter ``model``: named in a notice, not applied


@dataclass
class CommandResult:
    """What the frontend does after a command ran.

    - ``text``: output to show (a local notice block; never sent to the model);
    - ``prompt``: a user turn to send to the Runner now (custom command or MCP
      prompt expansion, already with ``@`` references resolved or not —
      the frontend resolves them as for typed text);
    - ``picker`` + ``picker_command``: open a picker; the chosen item's value is
      run as ``f"{picker_command} {value}"``;
    - ``confirm`` + ``confirm_command``: ask yes/no first (``/clear``); "yes"
      runs ``confirm_command``;
    - ``exit``: leave the program;
    - ``error``: True when ``text`` is an error message (unknown command, bad
      arguments);
    - ``turn``: set with ``prompt`` by a custom command file: run the prompt with
      ``reasonix.boot.command_turn.run_turn`` so its ``allowed-tools`` and shell
      lines apply (see :class:`CommandTurn`).
    """

    text: str = ""
    prompt: str | None = None
    picker: Sequence[PickerItem] = ()
    picker_title: str = ""
    picker_command: str = ""
    confirm: str = ""
    confirm_command: str = ""
    exit: bool = False
    error: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    turn: CommandTurn | None = None  # a custom command's allowed-tools and shell lines


class CommandHost(Protocol):
    """What commands may read and change of the live runtime (implemented in boot).

    Methods raise ReasonixError subclasses with a user-facing message on
    failure; the registry turns those into ``CommandResult(error=True)``.
    """

    workspace: Path

    def status(self) -> dict[str, Any]:
        """Model, mode, session id, title, tokens, cost, context used/window, cache ratio."""
        ...

    def new_session(self) -> str:
        """Start a new session (``/new``); returns its id."""
        ...

    def clear(self) -> str:
        """``/clear`` (after the confirmation): start over in a new session and delete
        the old transcript — CMD-1: discarded, not saved; memory is kept."""
        ...

    def compact(self, focus: str) -> str:
        """``/compact [focus]``: prune and summarise now; returns what it did."""
        ...

    def models(self) -> list[PickerItem]:
        """The models ``/model`` can pick from."""
        ...

    def switch_model(self, ref: str) -> str:
        """``/model REF``; returns the resolved reference."""
        ...

    def set_effort(self, level: str) -> str:
        """``/effort LEVEL``; returns the level in force."""
        ...

    def effort(self) -> str:
        """The reasoning-effort hint in force ("" when unset)."""
        ...

    def sessions(self) -> list[PickerItem]:
        """This workspace's sessions for ``/resume`` (newest first)."""
        ...

    def resume(self, query: str) -> str:
        """``/resume ID|TITLE``; returns the session id."""
        ...

    def memory(self, args: str) -> str:
        """``/memory …``: run a memory sub-command and return its output."""
        ...

    def mcp_servers(self) -> list[dict[str, Any]]:
        """Per server: name, state, tools, prompts, resources counts, error text."""
        ...

    def mcp_auth(self, name: str) -> str:
        """``/mcp auth NAME``: (re)authorise an OAuth server; returns what happened."""
        ...

    def mcp_enable(self, name: str, enabled: bool) -> str:
        """``/mcp enable|disable NAME`` for this process; returns what happened."""
        ...

    def mcp_prompts(self) -> list[dict[str, Any]]:
        """MCP prompts: server, name, description, arguments (CMD-6)."""
        ...

    def mcp_prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        """Render one MCP prompt (``prompts/get``) to the text of a user turn."""
        ...

    def mcp_resources(self) -> list[dict[str, Any]]:
        """MCP resources: server, uri, name, description (for ``@server:uri``)."""
        ...

    def read_resource(self, server: str, uri: str) -> str:
        """``resources/read`` of one MCP resource, as text (REF-5)."""
        ...

    def pins(self) -> list[str]:
        """Items every later summary carries verbatim (``/pins``)."""
        ...

    def pin(self, text: str) -> list[str]:
        """``/pin TEXT``; the pins now in force."""
        ...

    def unpin(self, number: int) -> str:
        """``/unpin N``; the text removed."""
        ...

    def context_report(self) -> str:
        """``/context``: what the context holds, the last loss report and the pins."""
        ...

    def cache_break(self, reason: str, target: str = "") -> str:
        """A forecast to confirm before ``reason`` (model, effort, clear) drops the prompt
        cache; "" when nothing is cached, nothing changes, or confirmation is off."""
        ...

    def rewind_points(self) -> list[PickerItem]:
        """The turns ``/rewind`` can go back to (value = turn number), plus "undo"."""
        ...

    def rewind(self, turn: int, mode: str) -> str:
        """``/rewind TURN MODE`` (both | code | conversation | fork); what it did."""
        ...

    def rewind_undo(self) -> str:
        """Undo the newest rewind; what it did."""
        ...
