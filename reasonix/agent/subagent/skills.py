"""Skills: ``<root>/<name>/SKILL.md`` files (frontmatter + body) and their index.

Discovery roots, in precedence order (the first skill of a name wins):

1. ``<workspace>/.reasonix/skills`` (scope ``project``)
2. ``<workspace>/.claude/skills`` (``claude-project``: Claude Code's folders work unchanged)
3. ``<home>/skills`` (``global``)
4. ``~/.claude/skills`` (``claude-user``)
5. the built-in skills (``builtin``; a user file of the same name replaces one)

A skill is *inline* (its body is loaded into the conversation by ``run_skill``)
or, with ``runAs: subagent`` in its frontmatter, a sub-agent *profile*
(:mod:`.profile`). Files under the skill's ``references/`` and ``scripts/``
folders are readable through ``run_skill``. The compact index — name, a
``[subagent]`` tag and a one-line description — is part of the stable prefix;
``invocation: manual`` keeps a skill out of it (SUB-30).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from reasonix.charsets import ASCII_ALNUM
from reasonix.command.frontmatter import FrontmatterError, parse
from reasonix.lazy import dataclass, field

__all__ = [
    "RESOURCE_DIRS",
    "Skill",
    "SkillSet",
    "discover",
    "read_resource",
    "skill_index",
    "skill_roots",
]

MAX_SKILL_BYTES = 256 * 1024
MAX_RESOURCE_BYTES = 256 * 1024
RESOURCE_DIRS = ("references", "scripts")
INDEX_MAX_CHARS = 4000  # a large catalogue must not dominate the turn it rides on
_LINE_WIDTH = 130
_NAME_START = frozenset(ASCII_ALNUM)
_NAME_CHARS = frozenset(ASCII_ALNUM + "_.-")


def valid_name(name: str) -> bool:
    """What ``^[A-Za-z0-9][A-Za-z0-9_.-]*$`` matches (a last newline allowed, as ``$``
    allows it), without a regular expression: skill names are checked on every start."""
    bare = name[:-1] if name.endswith("\n") else name
    return bool(bare) and bare[0] in _NAME_START and _NAME_CHARS.issuperset(bare)


@dataclass(frozen=True)
class Skill:
    """One skill: its identifier, frontmatter (lower-cased keys) and body."""

    name: str
    description: str
    body: str
    scope: str  # project | claude-project | global | claude-user | builtin
    path: str = ""  # the SKILL.md file ("" for a built-in)
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def run_as(self) -> str:
        """``subagent`` for a profile, else ``inline``."""
        value = self.meta.get("runas", self.meta.get("run-as", "")).strip().lower()
        return "subagent" if value == "subagent" else "inline"

    @property
    def invocation(self) -> str:
        """``manual`` keeps the skill out of the model-visible index; else ``auto``."""
        return "manual" if self.meta.get("invocation", "").strip().lower() == "manual" else "auto"

    @property
    def directory(self) -> Path | None:
        """The skill's folder (None for a built-in)."""
        return Path(self.path).parent if self.path else None

    def resources(self, limit: int = 200) -> list[str]:
        """Files under ``references/`` and ``scripts/``, relative to the skill folder."""
        base = self.directory
        if base is None:
            return []
        out: list[str] = []
        for sub in RESOURCE_DIRS:
            root = base / sub
            if not root.is_dir():
                continue
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames.sort()
                for name in sorted(filenames):
                    rel = Path(dirpath, name).relative_to(base)
                    out.append(rel.as_posix())
                    if len(out) >= limit:
                        return out
        return out

    def has_resource_dirs(self) -> bool:
        """True when the folder holds ``references/`` or ``scripts/`` (a rich skill)."""
        base = self.directory
        return base is not None and any((base / d).exists() for d in RESOURCE_DIRS)


@dataclass
class SkillSet:
    """The skills of one workspace in precedence order, plus what discovery skipped."""

    skills: list[Skill] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        """The skill called ``name`` (case-sensitive), or None."""
        return next((s for s in self.skills if s.name == name), None)

    def names(self) -> list[str]:
        """Every skill name, in precedence order."""
        return [s.name for s in self.skills]

    def profiles(self) -> list[Skill]:
        """The ``runAs: subagent`` skills."""
        return [s for s in self.skills if s.run_as == "subagent"]


def skill_roots(workspace: Path, home: Path, user_home: Path) -> list[tuple[Path, str]]:
    """The discovery roots and their scopes, in precedence order."""
    return [
        (workspace / ".reasonix" / "skills", "project"),
        (workspace / ".claude" / "skills", "claude-project"),
        (home / "skills", "global"),
        (user_home / ".claude" / "skills", "claude-user"),
    ]


def _read_text(path: Path, cap: int) -> str:
    """A small regular text file; ValueError with the reason otherwise."""
    try:
        info = os.stat(path)
    except OSError as err:
        raise ValueError(f"cannot read it ({err.strerror or err})") from err
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("not a regular file")
    if info.st_size > cap:
        raise ValueError(f"too large ({info.st_size:,} bytes; at most {cap:,})")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        data = os.read(fd, cap + 1)
    finally:
        os.close(fd)
    if len(data) > cap or b"\x00" in data:
        raise ValueError("too large or binary")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 text (byte {err.start})") from err


def first_line(body: str, width: int = 100) -> str:
    """The first non-empty line of ``body`` without Markdown heading marks, clipped."""
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text if len(text) <= width else text[: width - 1] + "…"
    return ""


def parse_skill(text: str, *, name: str, scope: str, path: str = "") -> Skill:
    """A skill from the text of its SKILL.md (FrontmatterError for a broken fence)."""
    meta, body = parse(text)
    wanted = meta.get("name", "").strip() or name
    if not valid_name(wanted):
        raise FrontmatterError(f"name {wanted!r}: use letters, digits, '_', '-' and '.'")
    description = " ".join(meta.get("description", "").split()) or first_line(body)
    return Skill(wanted, description, body.strip("\n") + "\n", scope, path, meta)


def _load_root(root: Path, scope: str, notices: list[str]) -> list[Skill]:
    if not root.is_dir():
        return []
    found: list[Skill] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as err:
        notices.append(f"{root}: cannot list skills ({err.strerror or err})")
        return []
    for entry in entries:
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        path = Path(entry.path) / "SKILL.md"
        if not path.exists():
            continue
        try:
            text = _read_text(path, MAX_SKILL_BYTES)
            found.append(parse_skill(text, name=entry.name, scope=scope, path=str(path)))
        except (ValueError, FrontmatterError) as err:
            notices.append(f"{path}: skipped ({err})")
    return found


def discover(
    workspace: Path, home: Path, user_home: Path, builtins: Sequence[Skill] = ()
) -> SkillSet:
    """Every skill of ``workspace``; bad files become notices, never errors."""
    out = SkillSet()
    seen: set[str] = set()
    groups: list[Iterable[Skill]] = []
    for root, scope in skill_roots(workspace, home, user_home):
        groups.append(_load_root(root, scope, out.notices))
    groups.append(builtins)
    for group in groups:
        for skill in group:
            if skill.name in seen:
                continue
            seen.add(skill.name)
            out.skills.append(skill)
    return out


def skill_index(skills: Sequence[Skill]) -> str:
    """The compact index block for the first user turn ("" when nothing is listed).

    Only names, tags and one-line descriptions: bodies load on demand.
    """
    lines = []
    for skill in skills:
        if skill.invocation == "manual":
            continue  # still callable by name and as /<name>, never suggested (SUB-30)
        tag = " [subagent]" if skill.run_as == "subagent" else ""
        desc = skill.description or "(no description in its frontmatter)"
        room = max(20, _LINE_WIDTH - len(skill.name) - len(tag))
        if len(desc) > room:
            desc = desc[: room - 1] + "…"
        lines.append(f"- {skill.name}{tag} — {desc}")
    if not lines:
        return ""
    listing = "\n".join(lines)
    if len(listing) > INDEX_MAX_CHARS:
        cut = len(listing) - INDEX_MAX_CHARS
        listing = listing[:INDEX_MAX_CHARS] + f"\n… ({cut} characters cut)"
    return "\n".join(
        [
            "<skills>",
            "Playbooks you can invoke with run_skill(name, arguments). An untagged skill is "
            "inline: its instructions come back as the tool result for you to follow, which "
            "is cheap, so load one when it plausibly applies. A [subagent] skill starts an "
            "isolated sub-agent that sees only the arguments you pass and returns only its "
            "result; it costs a whole extra run, so use it for context-heavy side work, not "
            "on weak relevance. The user can also type /<name>.",
            listing,
            "</skills>",
        ]
    )


def read_resource(skill: Skill, rel: str) -> str:
    """The text of ``rel`` (under ``references/`` or ``scripts/``); ValueError otherwise."""
    base = skill.directory
    if base is None:
        raise ValueError(f"skill {skill.name!r} is built in and has no files")
    parts = Path(rel).parts
    if not parts or parts[0] not in RESOURCE_DIRS or ".." in parts or Path(rel).is_absolute():
        raise ValueError(
            f"file {rel!r}: give a path under references/ or scripts/ of the skill "
            f"(it has: {', '.join(skill.resources()) or 'no files'})"
        )
    real = Path(os.path.realpath(base / rel))
    allowed = [Path(os.path.realpath(base / d)) for d in RESOURCE_DIRS]
    if not any(real == a or real.is_relative_to(a) for a in allowed):
        raise ValueError(f"file {rel!r} leads outside the skill's folders")
    return _read_text(real, MAX_RESOURCE_BYTES)
