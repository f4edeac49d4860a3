"""What the chat view shows, as plain data: transcript, composer, overlay stack, footer.

Only the UI thread changes this state (Runner events reach it through a
queue, see :mod:`reasonix.cli.tui.app`); :func:`reasonix.cli.tui.view.render`
turns it into screen rows. Every text stored here has already been through
the terminal sanitiser (:mod:`reasonix.cli.tui.ingest`).

Overlays come in two kinds (CMD-7/8): *modal* ones (approvals, pickers,
confirmations) take the keyboard and hide the composer; *input-owned* ones
(slash and ``@`` autocomplete) float above the composer, which keeps the
keyboard. :func:`hide_composer` is the one place that classifies them; a new
overlay class must be added there, and the layout test checks that it is.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "INPUT_OVERLAYS",
    "MODAL_OVERLAYS",
    "AnswerBlock",
    "AppState",
    "ApprovalOverlay",
    "Block",
    "CompletionOverlay",
    "Composer",
    "ConfirmOverlay",
    "NoticeBlock",
    "Overlay",
    "PickerItemView",
    "PickerOverlay",
    "ReasoningBlock",
    "Status",
    "ToolBlock",
    "Transcript",
    "UserBlock",
    "hide_composer",
]

_versions = itertools.count(1)


class Block:
    """One item of the transcript; ``version`` changes whenever its rows would."""

    def __init__(self) -> None:
        self.version = next(_versions)
        self.cache: Any = None  # the view's rendered rows for (width, version, detail)

    def touch(self) -> None:
        """Mark the block changed so the view renders it again."""
        self.version = next(_versions)


class UserBlock(Block):
    """What the user sent (or a command line they ran)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class AnswerBlock(Block):
    """The model's visible answer, Markdown, growing while it streams."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text
        self.open = True  # still streaming
        self.markdown: Any = None  # the view's MarkdownCache

    def add(self, text: str) -> None:
        """Append a streamed piece."""
        self.text += text
        self.touch()


class ReasoningBlock(Block):
    """The model's thinking: dimmed, collapsed to one line unless details are shown."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.text = text
        self.open = True

    def add(self, text: str) -> None:
        """Append a streamed piece."""
        self.text += text
        self.touch()


class ToolBlock(Block):
    """A card for one tool call: name, key argument, status, duration, output, diff."""

    def __init__(self, name: str, arguments: dict[str, Any], call_id: str = "") -> None:
        super().__init__()
        self.name, self.arguments, self.call_id = name, arguments, call_id
        self.status = "running"  # waiting | running | ok | error | blocked
        self.seconds: float | None = None
        self.output = ""
        self.diff: list[str] | None = None

    def finish(self, status: str, output: str, seconds: float | None) -> None:
        """Record the result."""
        self.status, self.output, self.seconds = status, output, seconds
        self.touch()


class NoticeBlock(Block):
    """A line of local information: a command's output, a notice, an error."""

    def __init__(self, text: str, kind: str = "notice") -> None:
        super().__init__()
        self.text, self.kind = text, kind  # notice | info | error | warn


class Transcript:
    """The list of blocks, with the streaming answer/reasoning blocks kept open."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def add(self, block: Block) -> Block:
        """Append a block (closing any open stream block first)."""
        self.close_streams()
        self.blocks.append(block)
        return block

    def last(self) -> Block | None:
        """The newest block, or None."""
        return self.blocks[-1] if self.blocks else None

    def close_streams(self) -> None:
        """End the streamed answer/reasoning blocks (a new step, a tool, the end of a turn)."""
        for block in reversed(self.blocks[-4:]):
            if isinstance(block, (AnswerBlock, ReasoningBlock)) and block.open:
                block.open = False
                block.touch()

    def stream(
        self, kind: type[AnswerBlock] | type[ReasoningBlock]
    ) -> AnswerBlock | ReasoningBlock:
        """The open block of ``kind`` at the end, created when the last block is another."""
        last = self.last()
        if isinstance(last, kind) and last.open:
            return last
        block = kind()
        self.add(block)
        return block

    def tool(self, call_id: str) -> ToolBlock | None:
        """The unfinished card of ``call_id`` among recent blocks (ids repeat across turns
        with some providers, so a finished card never matches)."""
        for block in reversed(self.blocks[-200:]):
            if (
                isinstance(block, ToolBlock)
                and block.call_id == call_id
                and block.status in ("waiting", "running")
            ):
                return block
        return None


@dataclass
class Composer:
    """The input document: text (may hold newlines) and a cursor index into it."""

    text: str = ""
    cursor: int = 0
    history: list[str] = field(default_factory=list)
    history_pos: int | None = None  # index into history while browsing
    draft: str = ""  # what was typed before browsing started

    def set(self, text: str, cursor: int | None = None) -> None:
        """Replace the document (cursor at the end unless given)."""
        self.text = text
        self.cursor = len(text) if cursor is None else max(0, min(cursor, len(text)))


class Overlay:
    """Base of everything drawn over the bottom of the screen."""


@dataclass
class ApprovalOverlay(Overlay):
    """A permission question: summary, diff or command, and the allowed choices."""

    request: Any  # the permission layer's ApprovalRequest (sanitised copies below)
    event: Any  # the ApprovalRequested event to answer
    title: str
    detail: list[str]  # lines shown under the title (reason, command, rule)
    diff: list[str] | None
    choices: list[tuple[str, str, Any]]  # (key, label, ApprovalChoice)
    scroll: int = 0


@dataclass
class PickerItemView:
    """One row of a picker."""

    label: str
    value: str
    description: str = ""


@dataclass
class PickerOverlay(Overlay):
    """Choose one item (``/model``, ``/resume``); typing filters, Enter runs the command."""

    title: str
    items: list[PickerItemView]
    command: str
    selected: int = 0
    query: str = ""

    def visible(self) -> list[PickerItemView]:
        """Items matching the typed filter."""
        q = self.query.lower()
        if not q:
            return self.items
        return [i for i in self.items if q in i.label.lower() or q in i.description.lower()]


@dataclass
class ConfirmOverlay(Overlay):
    """A yes/no question (``/clear``); yes runs ``command``."""

    question: str
    command: str


@dataclass
class CompletionOverlay(Overlay):
    """Slash-command or ``@`` candidates under the word being typed (input-owned)."""

    kind: str  # "slash" | "ref"
    start: int  # where the completed word starts in the composer text
    items: list[tuple[str, str]]  # (text to insert, description)
    selected: int = 0


# CMD-8: every Overlay subclass is in exactly one of these (tests check it).
MODAL_OVERLAYS: tuple[type[Overlay], ...] = (ApprovalOverlay, PickerOverlay, ConfirmOverlay)
INPUT_OVERLAYS: tuple[type[Overlay], ...] = (CompletionOverlay,)


def hide_composer(overlay: Overlay | None) -> bool:
    """True when ``overlay`` is modal, so the composer is hidden (CMD-7)."""
    if overlay is None:
        return False
    if isinstance(overlay, MODAL_OVERLAYS):
        return True
    if isinstance(overlay, INPUT_OVERLAYS):
        return False
    raise TypeError(f"overlay {type(overlay).__name__} is not classified in hide_composer()")


@dataclass
class Status:
    """The footer's facts."""

    model: str = ""
    mode: str = ""
    context_used: int | None = None
    context_window: int = 0
    compact_at: int = 0
    cache_ratio: float | None = None
    cost: str = ""
    session: str = ""


@dataclass
class AppState:
    """Everything the view renders."""

    transcript: Transcript = field(default_factory=Transcript)
    composer: Composer = field(default_factory=Composer)
    overlays: list[Overlay] = field(default_factory=list)
    status: Status = field(default_factory=Status)
    busy: str = ""  # "" idle, else what runs ("working", "compacting", "starting")
    hint: str = ""  # a short message at the right of the footer
    scroll: int = 0  # rows scrolled up from the bottom; 0 follows new output
    detail: bool = False  # Ctrl-O: tool output and reasoning expanded
    dismissed: str = ""  # composer text whose autocomplete the user closed with Esc
    tick: int = 0  # spinner phase
    page: int = 10  # transcript rows on screen (PgUp/PgDn step), set by the app

    @property
    def overlay(self) -> Overlay | None:
        """The top overlay, or None."""
        return self.overlays[-1] if self.overlays else None

    def modal(self) -> Overlay | None:
        """The top overlay when it is modal (it takes the keys)."""
        top = self.overlay
        return top if hide_composer(top) else None
