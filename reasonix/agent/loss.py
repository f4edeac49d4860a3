"""Compaction loss reports: what a summary no longer mentions, found without a model call.

After a summary checkpoint, :func:`loss_report` compares the messages it
replaced with the summary text and lists, per kind, what the summary dropped:
file paths, symbols, shell commands run, error lines, URLs, numbers the user
gave, and the user's sentences that state constraints ("don't", "must",
"never", "always", 不要/必须/不能 …). Pinned items are carried into every
summary verbatim, so they are never reported. Pure: text in, lists out.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from reasonix.provider.types import Message, Role

if TYPE_CHECKING:
    from typing import Any

__all__ = ["KINDS", "LossReport", "extract", "loss_report"]

KINDS = ("constraints", "paths", "commands", "errors", "urls", "numbers", "symbols")
PER_KIND = 20  # items kept per kind (the report says how many more)
_CONSTRAINT_WORDS = (
    r"\b(?:don'?t|do not|does not|must(?:n'?t)?|never|always|should(?:n'?t| not)?|"
    r"avoid|only|no longer|make sure|cannot|can'?t)\b|不要|必须|不能|务必|禁止|别|只能|一定要"
)
_FILE_EXT = (
    r"py|pyi|js|jsx|ts|tsx|go|rs|c|h|cc|cpp|hpp|java|kt|rb|php|cs|swift|sh|md|rst|txt|json|"
    r"toml|ya?ml|ini|cfg|sql|html|css|scss|vue|lock|proto|gradle|xml|csv"
)


@functools.cache
def _rx() -> dict[str, re.Pattern[str]]:
    return {
        "url": re.compile(r"https?://[^\s<>\"'`)\]]+"),
        "path": re.compile(
            rf"(?<![\w@/])(?:\.{{0,2}}/)?(?:[\w.-]+/)+[\w.-]*|(?<![\w/.])[\w-]+\.(?:{_FILE_EXT})\b"
        ),
        "ticked": re.compile(r"`([^`\n]{2,80})`"),
        "ident": re.compile(
            r"\b(?:[a-z]+_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Z][a-z]+[A-Z]\w+)\b"
        ),
        "number": re.compile(r"(?<![\w.])\d[\d_,.]*\d(?:\s?(?:%|ms|s|kb|mb|gb|k|m))?(?!\w)|\b\d\b"),
        "error": re.compile(
            r"(?i)\b(?:error|exception|traceback|failed|failure|fatal|panic|assert\w*)\b"
        ),
        "constraint": re.compile(_CONSTRAINT_WORDS, re.I),
        "sentence": re.compile(r"[^.!?。！？\n]+[.!?。！？]?"),
        "word": re.compile(r"[\w\u4e00-\u9fff]{3,}|[\u4e00-\u9fff]{2,}"),
        "skills": re.compile(r"<skills>\n.*?\n</skills>", re.S),
    }


class LossReport:
    """Per kind, the items the summary dropped (first :data:`PER_KIND`) and their count.

    A plain class, not a dataclass: an accumulator (:meth:`merge`) every run's result
    builds (issue 39).
    """

    def __init__(
        self, dropped: dict[str, list[str]] | None = None, counts: dict[str, int] | None = None
    ) -> None:
        self.dropped: dict[str, list[str]] = {} if dropped is None else dropped
        self.counts: dict[str, int] = {} if counts is None else counts

    @property
    def empty(self) -> bool:
        """True when the summary kept everything that was looked for."""
        return not any(self.counts.values())

    def text(self, limit: int = 3) -> str:
        """Lines for a notice or ``/context``: kind, count, the first items."""
        rows = []
        for kind in KINDS:
            n = self.counts.get(kind, 0)
            if n:
                items = "; ".join(self.dropped[kind][:limit])
                more = f" (+{n - limit} more)" if n > limit else ""
                rows.append(f"  {kind} ({n}): {items}{more}")
        if not rows:
            return "the summary kept every path, command, error, URL, number and constraint"
        return "the summary no longer mentions:\n" + "\n".join(rows) + "\n/pin TEXT keeps an item"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``compaction.dropped`` in ``run --json``)."""
        return {k: {"count": self.counts[k], "first": self.dropped[k][:5]}
                for k in KINDS if self.counts.get(k)}  # fmt: skip

    def merge(self, other: LossReport) -> None:
        """Add another checkpoint's report (a run may compact more than once)."""
        for kind, items in other.dropped.items():
            have = self.dropped.setdefault(kind, [])
            have += [i for i in items if i not in have][: max(0, PER_KIND - len(have))]
            self.counts[kind] = self.counts.get(kind, 0) + other.counts.get(kind, 0)


def _add(out: dict[str, list[str]], kind: str, item: str) -> None:
    item = " ".join(item.split()).strip(" ,;:")
    if kind in ("paths", "numbers", "urls"):
        item = item.rstrip(".,;:")
    if len(item) >= 2 and item not in out[kind]:
        out[kind].append(item)


def _tool_args(call_args: str) -> dict[str, Any]:
    try:
        value = json.loads(call_args or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def extract(messages: Iterable[Message]) -> dict[str, list[str]]:
    """What the messages mention, per kind, in order of first mention."""
    rx = _rx()
    out: dict[str, list[str]] = {k: [] for k in KINDS}
    for m in messages:
        text = m.content or ""
        if m.role is Role.USER and "<skills>" in text:  # the host's skill index, not the user's
            text = rx["skills"].sub(" ", text)
        for call in m.tool_calls:
            args = _tool_args(call.arguments)
            if call.name == "bash" and isinstance(args.get("command"), str):
                _add(out, "commands", args["command"][:200])
            for key in ("path", "file_path", "source_path", "destination_path"):
                if isinstance(args.get(key), str):
                    _add(out, "paths", args[key])
        for url in rx["url"].findall(text):
            _add(out, "urls", url.rstrip(".,;:"))
        bare = rx["url"].sub(" ", text)
        if m.role is Role.TOOL:
            for line in text.splitlines():
                if rx["error"].search(line) and len(line.strip()) > 8:
                    _add(out, "errors", line.strip()[:200])
            continue
        for path in rx["path"].findall(bare):
            if "/" in path or "." in path:
                _add(out, "paths", path)
        for sym in [*rx["ticked"].findall(text), *rx["ident"].findall(bare)]:
            if " " not in sym.strip():
                _add(out, "symbols", sym)
        if m.role is Role.USER:
            for num in rx["number"].findall(bare):
                _add(out, "numbers", num)
            for sentence in rx["sentence"].findall(text):
                if rx["constraint"].search(sentence):
                    _add(out, "constraints", sentence[:300])
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _kept(kind: str, item: str, summary: str, words: set[str]) -> bool:
    if _norm(item) in summary:
        return True
    if kind in ("constraints", "errors"):  # kept in other words: most content words survive
        mine = {w.lower() for w in _rx()["word"].findall(item)}
        return bool(mine) and len(mine & words) >= 0.7 * len(mine)
    if kind == "paths":
        return _norm(item).rstrip("/").rsplit("/", 1)[-1] in summary and "/" not in item.strip("/")
    return False


def loss_report(replaced: Sequence[Message], summary: str, pins: Sequence[str] = ()) -> LossReport:
    """What ``summary`` no longer mentions of ``replaced`` (pinned items excluded)."""
    found = extract(replaced)
    text = _norm(summary)
    words = {w.lower() for w in _rx()["word"].findall(summary)}
    pinned = [_norm(p) for p in pins]
    report = LossReport()
    for kind in KINDS:
        lost = [
            i for i in found[kind]
            if not _kept(kind, i, text, words) and not any(_norm(i) in p or p in _norm(i)
                                                            for p in pinned)
        ]  # fmt: skip
        if lost:
            report.dropped[kind] = lost[:PER_KIND]
            report.counts[kind] = len(lost)
    return report
