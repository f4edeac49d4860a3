"""A synthetic long session, written through the real transcript writer.

Used by ``bench/longsession.py`` (2,000 turns, ~40 MB) and by the tests that
guard per-turn costs (a few hundred turns). Each turn is what a coding agent
writes: the user's request, an assistant message calling one to three tools
(``read_file``, ``grep``, ``bash``), their results (source text, match lists,
test logs; now and then one long enough to be pruned) and a closing answer.
Two compactions (checkpoint records with a summary and pruned tool results,
as the context manager writes them) sit half way and 20 turns before the end,
so the live projection is what a context window holds.
Deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from reasonix.agent.compaction import Checkpoint, checkpoint_record
from reasonix.agent.session import Session
from reasonix.provider.types import Message, Role, ToolCall

__all__ = ["write_long_session"]

_WORDS = [
    "parser",
    "token",
    "buffer",
    "request",
    "session",
    "config",
    "handler",
    "value",
    "index",
    "cache",
    "stream",
    "window",
    "record",
    "message",
    "result",
    "error",
    "offset",
    "length",
    "schema",
    "provider",
    "context",
    "budget",
    "summary",
    "checkpoint",
    "turn",
    "tool",
    "path",
    "file",
    "line",
    "column",
]


def _code_lines(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        a, b, c = rng.choice(_WORDS), rng.choice(_WORDS), rng.choice(_WORDS)
        pad = "    " * rng.randint(0, 3)
        out.append(
            rng.choice(
                (
                    f"{pad}def {a}_{b}(self, {c}: int) -> str:",
                    f"{pad}{a} = self.{b}.get({c!r}, {i})",
                    f"{pad}if {a} is None or len({b}) > {i}:",
                    f"{pad}return {a}_{b}({c}, offset={i % 97})",
                    f'{pad}"""Return the {a} of the {b} for {c}."""',
                    f"{pad}raise ValueError(f'bad {a}: {{{b}!r}}')",
                )
            )
        )
    return out


def write_long_session(
    workspace: Path,
    turns: int = 2000,
    *,
    bytes_per_turn: int = 20_000,
    compactions: int = 2,
    seed: int = 7,
    root: Path | None = None,
    model: str = "m",
) -> Path:
    """Write a session of ``turns`` turns for ``workspace``; return the transcript path.

    ``bytes_per_turn`` is the average size of a turn's tool output (20 kB
    gives ~40 MB over 2,000 turns). ``root`` puts the transcript elsewhere
    than the workspace's sessions directory; ``model`` is the meta record's model
    (a resume under another model starts by forecasting a cache break).
    """
    rng = random.Random(seed)
    pool = _code_lines(rng, 4000)
    # The last compaction leaves a tail of turns a context window holds (~400 kB).
    spacing = (turns - min(20, turns // 10)) // max(1, compactions)
    marks = {spacing * (k + 1) for k in range(compactions)}
    session = Session.create(
        workspace, {"system": "You are a coding agent.", "model": model}, root=root
    )
    try:
        generation = 0
        pruned: set[int] = set()
        for t in range(1, turns + 1):
            n = len(session)  # record index of the user message
            session.append_message(
                Message(
                    Role.USER, f"turn {t}: fix the {rng.choice(_WORDS)} handling in module {t % 40}"
                )
            )
            calls = []
            for k in range(rng.randint(1, 3)):
                name = rng.choice(("read_file", "grep", "bash"))
                args = {"read_file": {"path": f"src/mod{t % 40}.py"},
                        "grep": {"pattern": rng.choice(_WORDS), "path": "src"},
                        "bash": {"command": "python -m pytest -q tests"}}[name]  # fmt: skip
                calls.append(ToolCall(f"call-{t}-{k}", name, json.dumps(args)))
            session.append_message(
                Message(
                    Role.ASSISTANT, "Let me look.", tool_calls=calls, reasoning="thinking " * 20
                )
            )
            budget = rng.randint(bytes_per_turn // 2, bytes_per_turn * 3 // 2) // len(calls)
            for call in calls:
                start = rng.randrange(len(pool))
                lines, size = [], 0
                while size < budget:
                    line = pool[(start + len(lines)) % len(pool)]
                    lines.append(line)
                    size += len(line) + 1
                out = "\n".join(lines)
                if len(out) > 8192:
                    pruned.add(len(session))
                session.append_message(
                    Message(Role.TOOL, out, tool_call_id=call.id, name=call.name)
                )
            session.append_message(Message(Role.ASSISTANT, f"Done with turn {t}: the tests pass."))
            if t in marks:
                generation += 1
                pruned = {i for i in pruned if i > n}
                summary = f"Summary {generation}: worked on modules 0-39; " + "notes " * 400
                session.append(
                    checkpoint_record(Checkpoint(generation, n - 1, summary, frozenset(pruned)))
                )
                pruned = set()
        session.sync()
        return session.path
    finally:
        session.close()
