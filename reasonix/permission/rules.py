"""Permission rule syntax: parsing, tool families and subject matching (PERM-2…6, PERM-22/23).

Grammar (one rule per string)::

    Tool                  every call of that tool family
    Tool(specifier)       calls whose *subject* matches the specifier
    Bash=<literal>        exactly this whole bash command, nothing else
    mcp__server__tool     one MCP tool;  mcp__server / mcp__server__*  every tool of a server

Family names (Claude-Code style) map to our tool IDs through :data:`FAMILIES`;
any other name is a literal tool ID, so ``edit_file(src/**)`` works too. Every
function here is pure: no file system, no environment except ``~`` expansion
done once by the caller-supplied ``home``.
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from reasonix.errors import ConfigError
from reasonix.lazy import Pattern, dataclass

if TYPE_CHECKING:
    from typing import Any, Literal

    SubjectKind = Literal["command", "path", "pattern", "url", "query", "none"]

__all__ = [
    "EDIT_TOOLS",
    "FAMILIES",
    "Rule",
    "absolute_path",
    "domain_match",
    "glob_match",
    "parse_rule",
    "path_match",
    "rule_warnings",
    "subject_kind",
    "subjects",
]


# PERM-3: the file-mutation group that `Edit` (and its synonym `Write`) denotes.
EDIT_TOOLS: frozenset[str] = frozenset(
    {
        "write_file",
        "edit_file",
        "multi_edit",
        "move_file",
        "notebook_edit",
        "delete_range",
        "delete_symbol",
    }
)

# Rule family -> the tool IDs it covers. Read covers the listing/search tools too so that a
# `Read(~/.ssh/**)` deny also stops `ls`/`grep`/`glob` rooted there (their `path` argument).
FAMILIES: dict[str, frozenset[str]] = {
    "Bash": frozenset({"bash"}),
    "Edit": EDIT_TOOLS,
    "Write": EDIT_TOOLS,
    "Read": frozenset({"read_file", "notebook_read", "ls", "grep", "glob", "code_index"}),
    "WebFetch": frozenset({"web_fetch"}),
    "WebSearch": frozenset({"web_search"}),
    "Grep": frozenset({"grep"}),
    "Glob": frozenset({"glob"}),
    "LS": frozenset({"ls"}),
    # Claude Code's names for one tool each (rules from .claude/settings*.json)
    "MultiEdit": frozenset({"multi_edit"}),
    "NotebookEdit": frozenset({"notebook_edit"}),
    "NotebookRead": frozenset({"notebook_read"}),
}

# Which argument carries the subject a specifier is matched against, per family / tool.
_FAMILY_SUBJECT: dict[str, SubjectKind] = {
    "Bash": "command",
    "Edit": "path",
    "Write": "path",
    "Read": "path",
    "LS": "path",
    "WebFetch": "url",
    "WebSearch": "query",
    "Grep": "pattern",
    "Glob": "pattern",
    "MultiEdit": "path",
    "NotebookEdit": "path",
    "NotebookRead": "path",
}
_TOOL_SUBJECT: dict[str, SubjectKind] = {
    "bash": "command",
    "read_file": "path",
    "notebook_read": "path",
    "ls": "path",
    "code_index": "path",
    "grep": "pattern",
    "glob": "pattern",
    "web_fetch": "url",
    "web_search": "query",
    **{t: "path" for t in EDIT_TOOLS},
}

_PATH_KEYS = ("path", "file_path", "notebook_path")
_PROC_ROOT_RE = Pattern(r"/proc/(?:self|thread-self|[0-9]+)(?:/task/[0-9]+)?/root(?=/|$)")
_NAME_RE = Pattern(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_MCP_SERVER_RE = Pattern(r"mcp__([A-Za-z0-9_.\-]+?)(?:__\*)?")


@dataclass(frozen=True)
class Rule:
    """One parsed rule. ``text`` is the canonical form (what gets saved).

    ``kind``: "bare" (whole family), "spec" (glob/path/domain specifier),
    "prefix" (``Bash(cmd:*)``), "literal" (``Bash=<cmd>``), "server" (all tools of
    an MCP server; ``specifier`` holds the server name).
    """

    text: str
    name: str
    tools: frozenset[str]
    kind: Literal["bare", "spec", "prefix", "literal", "server"]
    specifier: str = ""
    subject: SubjectKind = "none"

    def covers_tool(self, tool_name: str) -> bool:
        """True when the rule names this tool at all (ignoring its specifier)."""
        if self.kind == "server":
            return tool_name.startswith(f"mcp__{self.specifier}__")
        return tool_name in self.tools

    @property
    def is_bash(self) -> bool:
        """True for rules about the bash tool (they are matched per segment)."""
        return self.tools == FAMILIES["Bash"]


def _err(rule: str, why: str) -> ConfigError:
    return ConfigError(f"invalid permission rule {rule!r}: {why}")


def _tools_for(name: str) -> frozenset[str]:
    return FAMILIES.get(name, frozenset({name}))


def _subject_for(name: str) -> SubjectKind:
    return _FAMILY_SUBJECT.get(name) or _TOOL_SUBJECT.get(name, "none")


def parse_rule(text: str) -> Rule:
    """Parse one rule string; raise :class:`ConfigError` naming the rule when it is malformed."""
    if not isinstance(text, str):
        raise ConfigError(f"invalid permission rule {text!r}: not a string")
    raw = text.strip()
    if not raw:
        raise _err(text, "empty rule")
    m = _NAME_RE.match(raw)
    if m is None:
        raise _err(text, "expected a tool name such as Bash, Edit or mcp__server__tool")
    name, rest = m.group(0), raw[m.end() :]
    if rest.startswith("="):
        if name not in ("Bash", "bash"):
            raise _err(text, "only Bash=<command> has the literal form")
        literal = rest[1:].strip()
        if not literal:
            raise _err(text, "empty Bash= literal")
        return Rule(f"Bash={literal}", "Bash", FAMILIES["Bash"], "literal", literal, "command")
    if name.startswith("mcp__"):
        return _parse_mcp(text, name, rest)
    if not rest:
        return Rule(name, name, _tools_for(name), "bare", "", _subject_for(name))
    if not (rest.startswith("(") and rest.endswith(")")):
        raise _err(text, "expected Tool or Tool(specifier)")
    spec = rest[1:-1]
    if not _balanced(spec):
        raise _err(text, "unbalanced parentheses")
    if not spec.strip():
        raise _err(text, "empty specifier")
    subject = _subject_for(name)
    if subject == "command":
        return _parse_bash_spec(text, name, spec)
    if subject == "url" and spec.startswith("domain:"):
        host = spec[len("domain:") :].strip().lower().rstrip(".")
        if not host or "/" in host:
            raise _err(text, "domain: needs a host name such as example.com or *.example.com")
        return Rule(
            f"{name}(domain:{host})", name, _tools_for(name), "spec", f"domain:{host}", subject
        )
    return Rule(f"{name}({spec})", name, _tools_for(name), "spec", spec, subject)


def _parse_mcp(text: str, name: str, rest: str) -> Rule:
    if rest == "*" and name.endswith("__"):
        name += "*"
        rest = ""
    server = _MCP_SERVER_RE.fullmatch(name)
    parts = name.split("__")
    if rest.startswith("("):
        # MCP tools expose no subject (PERM-4): keep the rule, it simply never matches a call.
        if len(parts) < 3 or not rest.endswith(")") or not rest[1:-1].strip():
            raise _err(text, "expected mcp__server__tool(specifier)")
        return Rule(f"{name}{rest}", name, frozenset({name}), "spec", rest[1:-1], "none")
    if rest:
        raise _err(text, "unexpected text after the MCP tool name")
    if "*" in name and not name.endswith("__*"):
        # PERM-23: no partial tool-name globs; only a whole server.
        raise _err(text, "MCP rules name an exact tool, or a whole server as mcp__server__*")
    if len(parts) == 2 or name.endswith("__*"):
        if server is None or not parts[1]:
            raise _err(text, "expected mcp__server or mcp__server__*")
        return Rule(f"mcp__{parts[1]}__*", name, frozenset(), "server", parts[1], "none")
    if len(parts) < 3 or not all(parts[1:]):
        raise _err(text, "expected mcp__server__tool")
    return Rule(name, name, frozenset({name}), "bare", "", "none")


def _parse_bash_spec(text: str, name: str, spec: str) -> Rule:
    tools = FAMILIES["Bash"]
    if spec.endswith(":*"):
        prefix = " ".join(spec[:-2].split())
        if not prefix:
            raise _err(text, "empty command prefix before :*")
        return Rule(f"Bash({prefix}:*)", "Bash", tools, "prefix", prefix, "command")
    # Legacy `Bash(cmd *)`: a single trailing " *" and no other wildcard is a prefix rule.
    if spec.endswith(" *") and "*" not in spec[:-2] and "?" not in spec[:-2]:
        prefix = " ".join(spec[:-2].split())
        if prefix:
            return Rule(f"Bash({prefix}:*)", "Bash", tools, "prefix", prefix, "command")
    return Rule(f"Bash({spec})", "Bash", tools, "spec", spec, "command")


def _balanced(spec: str) -> bool:
    depth = 0
    for ch in spec:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def rule_warnings(text: str, workspace: str | None = None) -> list[str]:
    """Non-fatal diagnostics (PERM-22): whitespace, unknown names, escaping paths."""
    out: list[str] = []
    if text != text.strip():
        out.append("leading or trailing whitespace")
    rule = parse_rule(text)
    known = set(FAMILIES) | {t for ts in FAMILIES.values() for t in ts} | set(_TOOL_SUBJECT)
    if rule.kind != "server" and not rule.name.startswith("mcp__") and rule.name not in known:
        out.append(f"unknown tool name {rule.name!r}")
    if rule.subject == "path" and rule.specifier:
        spec = rule.specifier
        if spec.startswith("/"):
            out.append("absolute path specifier")
        elif ".." in spec.split("/"):
            out.append("specifier escapes the workspace")
    return out


def subject_kind(rule: Rule) -> SubjectKind:
    """What argument the rule's specifier is matched against."""
    return rule.subject


def subjects(kind: SubjectKind, args: dict[str, Any]) -> list[str]:
    """The subject strings a call exposes for ``kind`` (empty: specifier rules cannot match).

    ``move_file`` exposes both of its paths; an allow needs both, a deny either.
    """
    if kind == "path":
        found = [args[k] for k in _PATH_KEYS if isinstance(args.get(k), str)]
        for k in ("source_path", "destination_path"):
            if isinstance(args.get(k), str):
                found.append(args[k])
        return [s for s in found if s]
    key = {"command": "command", "pattern": "pattern", "url": "url", "query": "query"}.get(kind)
    if key is None:
        return []
    value = args.get(key)
    return [value] if isinstance(value, str) else []


@lru_cache(maxsize=1024)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    # PERM-5: `*` crosses `/` and `\`, `?` is one character, brackets are literal.
    # Gitignore flavour on top: `**/` may match zero directories, and `/**` at the end
    # matches the directory itself as well as everything below it.
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
        elif pattern[i] == "*":
            out.append(".*")
            i += 1
        elif pattern[i] == "?":
            out.append(".")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def glob_match(pattern: str, subject: str) -> bool:
    """Whole-string glob match with the PERM-5 rules."""
    return _glob_regex(pattern).fullmatch(subject) is not None


def _absolute(path: str, workspace: str | None, home: str) -> str:
    path = path.replace("\\", "/")
    if path == "~" or path.startswith("~/"):
        path = home.rstrip("/") + path[1:]
    elif not path.startswith("/") and workspace:
        path = workspace.rstrip("/") + "/" + path
    # normpath keeps the decision pure (no symlink resolution); `..` is folded lexically.
    norm = posixpath.normpath(path) if path else path
    if path.startswith("/"):
        norm = "/" + norm.lstrip("/")
        # /proc/self/root/etc is /etc: fold the kernel's root aliases lexically too.
        m = _PROC_ROOT_RE.match(norm)
        while m:
            norm = "/" + norm[m.end() :].lstrip("/")
            m = _PROC_ROOT_RE.match(norm)
    return norm


def absolute_path(path: str, workspace: str | None, home: str) -> str:
    """``path`` as the absolute, lexically normalised form rules are matched against."""
    return _absolute(path, workspace, home)


def path_match(spec: str, subject: str, workspace: str | None, home: str) -> bool:
    """Match a path specifier against a path argument, both anchored at the workspace."""
    return glob_match(_absolute(spec, workspace, home), _absolute(subject, workspace, home))


def domain_match(spec: str, url: str) -> bool:
    """`domain:example.com` matches that host only; `domain:*.example.com` its subdomains."""
    want = spec[len("domain:") :]
    try:
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return False
    if not host:
        return False
    if want.startswith("*."):
        return host.endswith(want[1:])
    return host == want
