"""The composer's Up/Down history, kept per project under the state directory.

``<state>/projects/<slug>/prompt_history.jsonl``: one JSON string per line
(so multi-line prompts survive), newest last, trimmed to :data:`KEEP`
entries when it grows past twice that. A file that cannot be read or
written costs the history, never the chat.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

__all__ = ["KEEP", "PromptHistory", "history_path"]

KEEP = 500


def history_path(workspace: Path) -> Path:
    """Where ``workspace``'s prompt history lives."""
    from reasonix.config import paths

    return paths.state_dir() / "projects" / paths.project_slug(workspace) / "prompt_history.jsonl"


class PromptHistory:
    """Load and append prompts for one project."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lines = 0

    def load(self) -> list[str]:
        """The stored prompts, oldest first (at most :data:`KEEP`)."""
        from reasonix.config.safe_read import STATE_LIMIT, read_bytes
        from reasonix.errors import ReasonixError

        try:  # a FIFO or device in its place is refused without blocking
            data = read_bytes(self.path, STATE_LIMIT)
        except (OSError, ReasonixError):
            return []
        raw = data.decode("utf-8", "replace").splitlines()
        self._lines = len(raw)
        out: list[str] = []
        for line in raw[-KEEP:]:
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, str) and value.strip():
                    out.append(value)
        return out

    def add(self, text: str) -> None:
        """Append one prompt (the file is rewritten short when it has grown long)."""
        if not text.strip():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(text, ensure_ascii=False) + "\n")
            self._lines += 1
            if self._lines > 2 * KEEP:
                self._trim()
        except OSError:
            return

    def _trim(self) -> None:
        kept = self.load()
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in kept), "utf-8")
        os.replace(tmp, self.path)
        self._lines = len(kept)
