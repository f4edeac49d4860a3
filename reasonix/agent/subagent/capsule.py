"""The ContextCapsule: what context a child run started from (spec §3.13, SUB-20).

Recorded in a sidecar next to the child's transcript
(``<id>.capsule.json``). It holds references and digests only — never a
copy of the parent's context — so its size does not depend on the parent's
history. ``capsuleHash`` is a stable identity over everything that shaped
the child's start (workspace, system prompt source and digest, tool scope
and schema digest, model, effort, task digest, resumed transcript, the
``inherited`` block); the parent session and tool-call ids are lineage
references and stay out of it, so two identical spawns hash alike.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.lazy import asdict, dataclass, field

if TYPE_CHECKING:
    from typing import Any

__all__ = ["INHERITED", "ContextCapsule", "digest", "write_sidecar"]

# SUB-19: what a child never inherits; every value is False by construction.
INHERITED = (
    "instruction_files", "memory", "parent_conversation", "goal", "plan", "sibling_results",
)  # fmt: skip


def digest(text: str) -> str:
    """``sha256:<hex>`` of ``text``."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True)
class ContextCapsule:
    """References and digests of one child's starting context."""

    workspace: str
    system_source: str  # "profile:<name>" | "default" | "default-read-only"
    system_hash: str
    tool_scope: tuple[str, ...]
    schema_hash: str
    model: str
    effort: str
    task_hash: str
    parent_session: str = ""
    parent_call: str = ""
    resumed: str = ""  # "continue:<id>" | "fork:<id>" | "" (a fresh transcript)
    inherited: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(INHERITED, False))

    @property
    def capsule_hash(self) -> str:
        """The stable identity (lineage references excluded, see the module docstring)."""
        body = asdict(self)
        body.pop("parent_session")
        body.pop("parent_call")
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return digest(text)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (with ``capsuleHash``)."""
        out = asdict(self)
        out["tool_scope"] = list(self.tool_scope)
        out["capsuleHash"] = self.capsule_hash
        return out


def write_sidecar(transcript: Path, capsule: ContextCapsule, run: dict[str, Any]) -> Path:
    """Write ``<transcript stem>.capsule.json`` atomically; returns its path."""
    path = transcript.with_suffix(".capsule.json")
    data = {"capsule": capsule.to_dict(), "capsuleHash": capsule.capsule_hash, "run": run}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
