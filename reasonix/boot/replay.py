"""``reasonix replay``: re-run a recorded session with today's build and config.

The workspace is copied to a scratch directory and, where checkpoints exist,
put back to how it was before the session's first change; every model
response is served from the recording (:class:`ReplayProvider`, no network);
approval questions are answered as the recording shows they were (run then →
allow once, refused then → deny). The tools, permission rules, hooks,
sandbox and compaction are today's, so what differs is what changed.

The real workspace is never touched: recorded paths inside it (models send
absolute ones, in tool arguments and in bash commands) are moved to the scratch
copy before they run, a write-scope question is always refused, and the
workspace is taken out of the run's writable roots and kept read-only in the
bash sandbox, so a path the rewrite missed is a divergence, not a change.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.checkpoints import CheckpointStore
from reasonix.agent.events import ApprovalRequested, Error, StepStart, ToolEnd
from reasonix.agent.replay import Divergence, Recording, ReplayProvider, compare_results
from reasonix.agent.rewind import RewindResult, agent_changes, put_back
from reasonix.agent.session import read_records
from reasonix.cancel import Cancel
from reasonix.config.paths import sessions_dir
from reasonix.errors import ConfigError
from reasonix.lazy import dataclass, field
from reasonix.permission import ApprovalChoice

from .options import RuntimeOptions
from .runtime import build_runtime

if TYPE_CHECKING:
    from typing import Any

__all__ = ["ReplayReport", "replay_session"]

_SKIP = shutil.ignore_patterns(".git", "node_modules", ".venv", "venv", "__pycache__",
                               ".mypy_cache", ".pytest_cache", ".ruff_cache")  # fmt: skip


@dataclass
class ReplayReport:
    """What a replay found."""

    session: str
    turns: int = 0
    tool_calls: int = 0
    divergences: list[Divergence] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``reasonix replay --json``)."""
        return {"session": self.session, "turns": self.turns, "tool_calls": self.tool_calls,
                "diverged": bool(self.divergences), "notes": self.notes,
                "divergences": [d.as_dict() for d in self.divergences]}  # fmt: skip


def _scratch(workspace: Path, session: str, report: ReplayReport) -> tuple[Path, Path]:
    root = Path(tempfile.mkdtemp(prefix="reasonix-replay-"))
    scratch = root / workspace.name
    shutil.copytree(workspace, scratch, symlinks=True, ignore=_SKIP)
    store = CheckpointStore(workspace)
    turns = store.turns(session) if CheckpointStore.available() else []
    first = next((t.before for t in turns if t.before and t.before != "-"), "")
    if not first:
        report.notes.append("no checkpoint for this session: replaying against the files as now")
        return root, scratch
    now, _ = store.snapshot("before replay")
    restored = RewindResult()
    files, before = agent_changes(store, turns, now)  # each file as the agent first found it
    put_back(store, scratch, files, before, restored)
    report.notes += restored.warnings  # a path that could not be put back, by name
    return root, scratch


def _moves(workspace: Path, recorded: str, scratch: Path) -> tuple[tuple[str, str], ...]:
    """Where the recording's workspace paths go: each spelling of it -> the scratch copy."""
    import os

    target = str(scratch)
    names = {recorded, str(workspace), os.path.realpath(recorded or workspace)} - {""}
    home = os.path.expanduser("~")
    for name in list(names):
        if home not in ("", "~", os.sep) and name.startswith(home + os.sep):
            names.add("~" + name[len(home) :])  # `cd ~/project` in a recorded command
    return tuple((name, target) for name in sorted(names))


def _touches(root: Any, real: Path) -> bool:
    """``root`` is ``real``, inside it or above it."""
    r = Path(root).resolve()
    return r == real or real in r.parents or r in real.parents


def _fence(tool_ctx: Any, workspace: Path) -> None:
    """Keep the real workspace out of the replay's reach: no writable root covers it
    (an ``allow_write`` of its parent would), and the bash sandbox mounts it read-only."""
    real = workspace.resolve()
    if _touches(tool_ctx.workspace, real):
        raise ConfigError(
            f"replay: [sandbox].workspace_root points the tools at {tool_ctx.workspace}, "
            "the real workspace, not the replay's copy; replay will not run there"
        )
    roots = getattr(tool_ctx, "write_roots", None)
    if isinstance(roots, list):
        roots[:] = [r for r in roots if not _touches(r, real)]  # the sandbox shares this list
    scope = tool_ctx.extra.get("write_scope")  # the file tools' own copy of the roots
    if scope is not None and isinstance(getattr(scope, "roots", None), list):
        scope.roots[:] = [r for r in scope.roots if not _touches(r, real)]
    sandbox = getattr(tool_ctx, "sandbox", None)
    if sandbox is not None and isinstance(getattr(sandbox, "read_only", None), list):
        sandbox.read_only.append(real)


def _answer(event: ApprovalRequested, recorded_ran: dict[tuple[str, str], bool]) -> None:
    # A question that is not about a recorded call (a write-scope request: the call
    # named a path outside the copy) has no key here and is refused.
    req = event.request
    key = (str(getattr(req, "tool_name", "")), repr(sorted(getattr(req, "args", {}).items())))
    event.answer(ApprovalChoice.ONCE if recorded_ran.get(key, False) else ApprovalChoice.DENY)


def replay_session(workspace: Path, session_path: Path) -> ReplayReport:
    """Replay the session at ``session_path`` (recorded in ``workspace``)."""
    import json

    recording = Recording(read_records(session_path))
    report = ReplayReport(session_path.stem, turns=len(recording.turns))
    root, scratch = _scratch(workspace, session_path.stem, report)
    moves = _moves(workspace, recording.workspace, scratch)
    recording.relocate(moves)
    provider = ReplayProvider(recording)
    names = (*(old for old, _ in moves), str(scratch))
    try:
        rt = build_runtime(RuntimeOptions(workspace=scratch, interactive=True, provider=provider))
        try:
            _fence(rt.tool_ctx, workspace)
            for i, turn in enumerate(recording.turns):
                provider.begin_turn(i)
                ran: dict[tuple[str, str], bool] = {}
                for k, reply in enumerate(turn.replies):
                    for call in reply.tool_calls:
                        with contextlib.suppress(ValueError, AttributeError):
                            args = json.loads(call.arguments or "{}")
                            key = (call.name, repr(sorted(args.items())))
                            ran[key] = turn.results.get((k, call.id), ("", False))[1]
                now: dict[tuple[int, str], tuple[str, bool, str]] = {}
                step = 0
                for event in rt.runner.run(turn.text, Cancel()):
                    if isinstance(event, StepStart):
                        step = event.step
                    elif isinstance(event, ApprovalRequested):
                        _answer(event, ran)
                    elif isinstance(event, ToolEnd):
                        refused = event.blocked or event.content.startswith(
                            ("blocked:", "unknown tool")
                        )
                        now[(step - 1, event.call_id)] = (event.content, not refused, event.name)
                    elif isinstance(event, Error) and i not in provider.missing:
                        kind = "blocked_by_hook" if "hook" in event.message else "error"
                        report.divergences.append(Divergence(i + 1, kind, event.message))
                report.tool_calls += len(now)
                report.divergences += compare_results(i + 1, turn, now, names)
                asked = provider.summaries_requested.count(i)
                if asked != turn.summaries:
                    text = f"compacted {asked} time(s) in this turn; the recording {turn.summaries}"
                    report.divergences.append(Divergence(i + 1, "compaction", text))
                if i in provider.missing:
                    text = "the run asked for a model reply the recording does not have"
                    report.divergences.append(Divergence(i + 1, "no_reply", text))
        finally:
            rt.close()
    finally:
        shutil.rmtree(sessions_dir(scratch), ignore_errors=True)
        shutil.rmtree(CheckpointStore(scratch).root, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
    return report
