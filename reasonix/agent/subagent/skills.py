"""Skills: ``<root>/<name>/SKILL.md`` files (frontmatter + body) and their index.

Discovery roots, in precedence order (the first skill of a name wins):

1. ``<workspace>/.reasonix/skills`` (scope ``project``)
2. ``<workspace>/.claude/skills`` (``claude-project``: Claude Code's folders work unchanged)
3. ``<home>/skills`` (``global``)
4. ``~/.claude/skills`` (``claude-user``)
5. the built-in skills (``builtin``; a user file of the same name replaces one)

A skill's identifier (its slug: what ``run_skill`` and ``/<slug>`` take) is its
frontmatter ``name`` when that is a valid name, else its folder's name: Claude
Code uses ``name`` as a display label only, and Anthropic's own plugins ship
names such as ``Hook Development``, which are kept as the skill's :attr:`Skill.label`.

A skill is *inline* (its body is loaded into the conversation by ``run_skill``,
or made the turn's instructions when the user types ``/<slug>``) or, with
``runAs: subagent`` in its frontmatter, a sub-agent *profile* (:mod:`.profile`).
Every file of the skill's folder (``reference.md``, ``forms.md``,
``scripts/x.py`` …; the shape of Anthropic's skills repository) is readable
through ``run_skill``, and the loaded body names the folder, with
``${CLAUDE_SKILL_DIR}`` replaced by it. The compact index — name, a
``[subagent]`` tag and a one-line description — is part of the stable prefix;
``invocation: manual`` and Claude's ``disable-model-invocation: true`` keep a
skill out of it (SUB-30); ``user-invocable: false`` keeps it off the ``/`` menu.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from reasonix.charsets import ASCII_ALNUM
from reasonix.command.frontmatter import FrontmatterError, parse

__all__ = [
    "RESOURCE_DIRS",
    "Skill",
    "SkillSet",
    "discover",
    "read_resource",
    "render_skill",
    "skill_index",
    "skill_roots",
    "slug",
]

MAX_SKILL_BYTES = 256 * 1024
MAX_RESOURCE_BYTES = 256 * 1024
RESOURCE_DIRS = ("references", "scripts")
INDEX_MAX_CHARS = 4000  # a large catalogue must not dominate the turn it rides on
_LINE_WIDTH = 130
_NAME_START = frozenset(ASCII_ALNUM)
_NAME_CHARS = frozenset(ASCII_ALNUM + "_.-")
SKILL_DIR_VAR = "${CLAUDE_SKILL_DIR}"  # Claude Code's name for the skill's folder in a body
_ARGUMENTS = "$ARGUMENTS"


def slug(text: str) -> str:
    """A valid skill name made from ``text`` ("Hook Development" → ``hook-development``;
    "" when nothing usable is left): runs of other characters become one ``-``."""
    out: list[str] = []
    for ch in text.strip().lower():
        if ch in _NAME_CHARS:
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    name = "".join(out).strip("-_.")
    return name if valid_name(name) else ""


def _flag(value: str) -> bool:
    return value.strip().lower() in ("true", "yes", "1", "on")


def valid_name(name: str) -> bool:
    """What ``^[A-Za-z0-9][A-Za-z0-9_.-]*$`` matches (a last newline allowed, as ``$``
    allows it), without a regular expression: skill names are checked on every start."""
    bare = name[:-1] if name.endswith("\n") else name
    return bool(bare) and bare[0] in _NAME_START and _NAME_CHARS.issuperset(bare)


class Skill(NamedTuple):
    """One skill: its identifier, frontmatter (lower-cased keys) and body.

    A named tuple, not a dataclass: an immutable record every run makes for each skill
    it finds (issue 39). A subclass (agents.AgentSkill) sets ``__slots__ = ()``.
    """

    name: str
    description: str
    body: str
    scope: str  # project | claude-project | global | claude-user | builtin
    path: str = ""  # the SKILL.md file ("" for a built-in)
    meta: Mapping[str, str] = MappingProxyType({})  # read-only: shared by every default

    @property
    def run_as(self) -> str:
        """``subagent`` for a profile, else ``inline``."""
        value = self.meta.get("runas", self.meta.get("run-as", "")).strip().lower()
        return "subagent" if value == "subagent" else "inline"

    @property
    def invocation(self) -> str:
        """``manual`` keeps the skill out of the model-visible index; else ``auto``.

        Claude Code's ``disable-model-invocation: true`` means the same here.
        """
        if self.meta.get("invocation", "").strip().lower() == "manual" or self.model_disabled:
            return "manual"
        return "auto"

    @property
    def model_disabled(self) -> bool:
        """Claude's ``disable-model-invocation: true``: only the user may run it (``/<name>``)."""
        return _flag(self.meta.get("disable-model-invocation", ""))

    @property
    def user_invocable(self) -> bool:
        """False for Claude's ``user-invocable: false``: not offered as ``/<name>``."""
        value = self.meta.get("user-invocable", "").strip().lower()
        return value not in ("false", "no", "0", "off")

    @property
    def label(self) -> str:
        """The display name: the frontmatter ``name`` as written (it may have spaces)."""
        return self.meta.get("name", "").strip() or self.name

    @property
    def directory(self) -> Path | None:
        """The skill's folder (None for a built-in)."""
        return Path(self.path).parent if self.path else None

    def resources(self, limit: int = 200) -> list[str]:
        """Every file of the skill's folder but SKILL.md, relative to it (hidden ones left out).

        Symlinked folders are not followed: what they hold may lie outside the skill.
        """
        base = self.directory
        if base is None:
            return []
        out: list[str] = []
        root = os.path.realpath(base) + os.sep
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                rel = Path(dirpath, name).relative_to(base)
                if name.startswith(".") or rel.as_posix() == "SKILL.md":
                    continue
                if not os.path.realpath(Path(dirpath, name)).startswith(root):
                    continue  # a symlink out of the folder: not the skill's, never readable
                out.append(rel.as_posix())
                if len(out) >= limit:
                    return out
        return out

    def has_resource_dirs(self) -> bool:
        """True when the folder holds ``references/`` or ``scripts/`` (a rich skill)."""
        base = self.directory
        return base is not None and any((base / d).exists() for d in RESOURCE_DIRS)


class SkillSet:
    """The skills of one workspace in precedence order, plus what discovery skipped.

    A plain class, not a dataclass: built once per run and extended in place (issue 39).
    """

    def __init__(self, skills: list[Skill] | None = None, notices: list[str] | None = None) -> None:
        self.skills: list[Skill] = [] if skills is None else skills
        self.notices: list[str] = [] if notices is None else notices

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
        # Claude's `name` is a label ("Hook Development"): the folder names the skill
        wanted = name if valid_name(name) else slug(name)
    if not wanted:
        raise FrontmatterError(f"name {name!r}: use letters, digits, '_', '-' and '.'")
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
    """The text of ``rel``, a file of the skill's folder; ValueError otherwise.

    ``rel`` is relative to the folder (``reference.md``, ``scripts/fill.py``); the
    folder's own absolute path and ``${CLAUDE_SKILL_DIR}/…`` are accepted too, since
    the body the model read names files that way. Nothing outside the folder is read,
    whatever a symlink inside it points at.
    """
    base = skill.directory
    if base is None:
        raise ValueError(f"skill {skill.name!r} is built in and has no files")
    rel = rel.strip()
    for prefix in (SKILL_DIR_VAR + "/", str(base) + os.sep, str(base) + "/"):
        rel = rel.removeprefix(prefix)
    parts = Path(rel).parts
    if not parts or ".." in parts or Path(rel).is_absolute():
        raise ValueError(
            f"file {rel!r}: give a path inside the skill's folder "
            f"(it has: {', '.join(skill.resources()) or 'no files'})"
        )
    real = Path(os.path.realpath(base / rel))
    root = Path(os.path.realpath(base))
    if not real.is_relative_to(root) or real == root:
        raise ValueError(f"file {rel!r} leads outside the skill's folder")
    return _read_text(real, MAX_RESOURCE_BYTES)


def _arguments(body: str, text: str) -> tuple[str, bool]:
    """``$ARGUMENTS`` and Claude's 0-based ``$ARGUMENTS[N]`` → ``text`` and its N-th word.

    Bare ``$1`` is left alone: skill bodies are full of shell examples that use it.
    Returns the new body and whether a placeholder was there.
    """
    if _ARGUMENTS not in body:
        return body, False
    from reasonix.command.args import split_args

    words = split_args(text) if text else []
    out: list[str] = []
    rest = body
    while (at := rest.find(_ARGUMENTS)) >= 0:
        out.append(rest[:at])
        rest = rest[at + len(_ARGUMENTS) :]
        close = rest.find("]")
        if rest.startswith("[") and close > 1 and rest[1:close].isdigit():
            index = int(rest[1:close])
            out.append(words[index] if index < len(words) else "")
            rest = rest[close + 1 :]
        else:
            out.append(text)
    out.append(rest)
    return "".join(out), True


def render_skill(skill: Skill, arguments: str = "") -> str:
    """An inline skill as instructions to follow: its body with ``${CLAUDE_SKILL_DIR}`` and
    ``$ARGUMENTS`` filled in, its folder and its files. ``run_skill`` returns this, and
    ``/<name> ARGS`` sends it as the turn (appending the arguments when the body has no
    ``$ARGUMENTS``, as Claude Code does)."""
    base = skill.directory
    body = skill.body.rstrip()
    if base is not None:
        body = body.replace(SKILL_DIR_VAR, str(base))
    text = arguments.strip()
    body, used = _arguments(body, text)
    head = f'<skill name="{skill.name}"'
    if skill.label != skill.name:
        head += f' label="{skill.label}"'
    out = [f'{head} dir="{base}">' if base is not None else head + ">", body, "</skill>"]
    if text and not used:
        out.append(f"ARGUMENTS: {text}")
    if base is not None:
        files = skill.resources()
        out.append(
            f"This skill's folder is {base} (its scripts run from there); "
            + (
                "read a file of it with run_skill(name, file=PATH):"
                if files
                else "it has no other files."
            )
        )
        out += [f"- {f}" for f in files]
    return "\n".join(out)
