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

from .width import Line

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
    "stamp",
]

_versions = itertools.count(1)


def stamp() -> int:
    """A number above every block version given out so far (each call takes one): a view
    that saw stamp ``n`` knows no block was made or touched since when the next is ``n + 1``."""
    return next(_versions)


class Block:
    """One item of the transcript; ``version`` changes whenever its rows would (versions are
    unique across all blocks and only grow: see :func:`stamp`)."""

    def __init__(self) -> None:
        self.version = next(_versions)
        # The view's rendered rows, with the (width, version, detail, gap) they were made for.
        self.cache: tuple[tuple[int, int, bool, bool], list[Line]] | None = None

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
        self.markdown: object = None  # the view's MarkdownCache (cards.py makes it)

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

    def __init__(self, name: str, arguments: dict[str, object], call_id: str = "") -> None:
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
        self.index: object = None  # the view's row index over the blocks (view.RowIndex)

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


class Composer:
    """The input document: text (may hold newlines) and a cursor index into it."""

    def __init__(self, text: str = "", cursor: int = 0) -> None:
        self.text, self.cursor = text, cursor
        self.history: list[str] = []
        self.history_pos: int | None = None  # index into history while browsing
        self.draft = ""  # what was typed before browsing started

    def set(self, text: str, cursor: int | None = None) -> None:
        """Replace the document (cursor at the end unless given)."""
        self.text = text
        self.cursor = len(text) if cursor is None else max(0, min(cursor, len(text)))


class Overlay:
    """Base of everything drawn over the bottom of the screen."""


class ApprovalOverlay(Overlay):
    """A permission question: summary, diff or command, and the allowed choices.

    ``event`` is what gets the answer (``answer(choice)``): the ApprovalRequested
    event, or the app's wrapper that also wakes the waiting turn.
    """

    def __init__(
        self,
        request: object,
        event: object,
        title: str,
        detail: list[str],
        diff: list[str] | None,
        choices: list[tuple[str, str, object]],  # (key, label, ApprovalChoice)
    ) -> None:
        self.request, self.event, self.title = request, event, title
        self.detail, self.diff, self.choices = detail, diff, choices
        self.scroll = 0


class PickerItemView:
    """One row of a picker."""

    def __init__(self, label: str, value: str, description: str = "") -> None:
        self.label, self.value, self.description = label, value, description


class PickerOverlay(Overlay):
    """Choose one item (``/model``, ``/resume``); typing filters, Enter runs the command."""

    def __init__(
        self, title: str, items: list[PickerItemView], command: str, selected: int = 0
    ) -> None:
        self.title, self.items, self.command = title, items, command
        self.selected = selected
        self.query = ""

    def visible(self) -> list[PickerItemView]:
        """Items matching the typed filter."""
        q = self.query.lower()
        if not q:
            return self.items
        return [i for i in self.items if q in i.label.lower() or q in i.description.lower()]


class ConfirmOverlay(Overlay):
    """A yes/no question: yes runs ``command`` (``/clear``) or the ``yes`` action, no the
    ``no`` action (saving an "always" rule: no = allow for this session only)."""

    def __init__(
        self,
        question: str,
        command: str = "",
        yes: tuple[object, ...] | None = None,
        no: tuple[object, ...] | None = None,
        title: str = "confirm",
    ) -> None:
        self.question, self.command, self.title = question, command, title
        self.yes, self.no = yes, no
        self.approval: object = None  # the approval this question belongs to (ends with its turn)


class CompletionOverlay(Overlay):
    """Slash-command or ``@`` candidates under the word being typed (input-owned)."""

    def __init__(self, kind: str, start: int, items: list[tuple[str, str]]) -> None:
        self.kind = kind  # "slash" | "ref"
        self.start = start  # where the completed word starts in the composer text
        self.items = items  # (text to insert, description)
        self.selected = 0


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


class Status:
    """The footer's facts."""

    def __init__(self) -> None:
        self.model = ""
        self.mode = ""
        self.context_used: int | None = None
        self.context_window = 0
        self.compact_at = 0
        self.cache_ratio: float | None = None
        self.cost = ""
        self.budget = ""  # what is left of the run budget ("" when none is set)
        self.session = ""
        self.script = ""  # the first line of the user's status command ([ui] status_command)


class AppState:
    """Everything the view renders."""

    def __init__(self, busy: str = "") -> None:
        self.transcript = Transcript()
        self.composer = Composer()
        self.overlays: list[Overlay] = []
        self.status = Status()
        self.busy = busy  # "" idle, else what runs ("working", "starting", "cancelling" …)
        self.hint = ""  # a short message at the right of the footer
        self.scroll = 0  # rows scrolled up from the bottom; 0 follows new output
        self.detail = False  # Ctrl-O: tool output and reasoning expanded
        self.dismissed = ""  # composer text whose autocomplete the user closed with Esc
        self.tick = 0  # spinner phase
        self.page = 10  # transcript rows on screen (PgUp/PgDn step), set by the app
        self.panel_page = 10  # rows of the approval diff window (its PgUp/PgDn step)
        # this turn's sub-agents: run id -> (label, latest SubagentProgress) (subagents.py)
        self.subagents: dict[str, tuple[str, object]] = {}

    @property
    def overlay(self) -> Overlay | None:
        """The top overlay, or None."""
        return self.overlays[-1] if self.overlays else None

    def modal(self) -> Overlay | None:
        """The top overlay when it is modal (it takes the keys)."""
        top = self.overlay
        return top if hide_composer(top) else None
