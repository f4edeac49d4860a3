"""Workspace confinement for the file tools (CFG-10, CFG-11, spec §3.12).

Every built-in file tool turns the model's path argument into a real path here:

* :func:`resolve_write` — writers. The target must lie under a write root:
  the workspace, ``ctx.write_roots`` (``[sandbox].allow_write``, ``--add-dir``)
  and ``ctx.config_dir`` when set. A sub-agent bound to declared write paths
  passes them as ``ctx.extra["write_paths"]``; that list then *replaces* the
  roots.
* :func:`resolve_read` — readers. Any path is readable unless it is at or
  below a ``ctx.forbid_read`` entry. Reads outside the workspace are allowed on
  purpose, like the peer agents: the model often needs a system header or a
  sibling checkout, and secrets are what ``forbid_read`` is for.
* :func:`is_read_forbidden` — for walking tools (ls, glob, grep) to drop
  entries silently instead of failing the whole walk.
* :func:`protected_paths` — Reasonix's own sessions, archive, memory and
  secrets; no writer touches them, whichever root would otherwise allow it.

Secrets are ``ctx.secrets`` (the composition root fills it from
``config.paths.secret_paths()``, the one list): provider keys, MCP OAuth
tokens, serve's password hash and token file. They are never read, whatever
``forbid_read`` says.

Resolution (the escape-proof part): relative paths join ``ctx.cwd`` (else the
workspace) and ``~`` is expanded; then the deepest *existing* ancestor
(a dangling symlink counts as existing) goes through ``os.path.realpath`` and
the missing tail is appended. A ``..`` in the missing tail is refused, because
it cannot be checked against the file system. Comparison is on these real
paths, so ``../x``, absolute paths, a symlink inside the workspace pointing
out, a symlinked parent directory and ``/proc/self/root/...`` all land where
the kernel would land and are judged there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import PathDenied
from reasonix.tool import ToolContext

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "base_dir",
    "display_path",
    "forbidden_roots",
    "is_read_forbidden",
    "protected_paths",
    "real_path",
    "resolve_read",
    "resolve_write",
    "write_roots",
]


def base_dir(ctx: ToolContext) -> Path:
    """The directory relative paths are taken against: ``ctx.cwd`` or the workspace."""
    return Path(ctx.cwd) if ctx.cwd is not None else Path(ctx.workspace)


def real_path(path: str | os.PathLike[str], base: str | os.PathLike[str]) -> Path:
    """Resolve ``path`` (relative to ``base``) to an absolute, symlink-free path.

    The deepest existing ancestor is resolved with ``os.path.realpath`` and the
    non-existing tail is appended. Raises :class:`PathDenied` when the tail
    contains ``..`` or the path is empty / contains a NUL byte.
    """
    text = os.fspath(path)
    if not text or "\x00" in text:
        raise PathDenied(f"invalid path {text!r}: give a non-empty file path")
    joined = os.path.join(os.fspath(base), os.path.expanduser(text))
    head, tail = _split_existing(joined)
    if ".." in tail:
        raise PathDenied(
            f"path {text!r} uses '..' after a directory that does not exist; "
            "give a plain path without '..'"
        )
    return Path(os.path.realpath(head), *[p for p in tail if p not in ("", ".")])


def _split_existing(path: str) -> tuple[str, list[str]]:
    """Split ``path`` into its deepest existing ancestor and the missing parts."""
    tail: list[str] = []
    cur = path
    # lexists: a dangling symlink is "existing", so realpath follows it to
    # where a write would really go instead of treating it as a new name.
    while not os.path.lexists(cur):
        parent, name = os.path.split(cur)
        if parent == cur:  # hit the root of a drive that does not exist
            break
        tail.insert(0, name)
        cur = parent
    return cur, tail


def _real_roots(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        real = Path(os.path.realpath(os.path.expanduser(os.fspath(p))))
        if real not in out:
            out.append(real)
    return out


def _under(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def write_roots(ctx: ToolContext) -> list[Path]:
    """The real directories (or files) writers may touch, in a stable order."""
    declared = ctx.extra.get("write_paths")
    if declared is not None:
        return _real_roots(declared)
    roots: list[str | os.PathLike[str]] = [ctx.workspace, *ctx.write_roots]
    if ctx.config_dir is not None:
        roots.append(ctx.config_dir)
    return _real_roots(roots)


def _secrets(ctx: ToolContext) -> list[Path]:
    return _real_roots(ctx.secrets)


def forbidden_roots(ctx: ToolContext) -> list[Path]:
    """The real paths of every ``forbid_read`` entry, plus Reasonix's own secrets.

    Provider keys, OAuth tokens, serve's password hash and token file
    (``ctx.secrets``) must not reach a model or a transcript through a file tool.
    """
    roots = _real_roots(ctx.forbid_read)
    return roots + [s for s in _secrets(ctx) if s not in roots]


def _check_text(path: str | os.PathLike[str]) -> None:
    """Refuse a model-given path with a lone surrogate (JSON ``"\\udcff"``).

    No UTF-8 output the model saw names such a file, and a result that echoes
    the name could not even be encoded.
    """
    try:
        os.fspath(path).encode("utf-8")
    except UnicodeEncodeError:
        raise PathDenied(f"invalid path {path!r}: it is not valid Unicode text") from None


# Reasonix's own records: no file tool writes them (nor the secrets), even when the
# config directory or the workspace (a run started in $HOME) contains them.
_STATE_PARTS = ("sessions", "archive", "memory")


def protected_paths(ctx: ToolContext) -> list[Path]:
    """Real paths file tools never write: session/archive/memory state, provider keys, tokens.

    A ``write_roots`` entry at or below one of them (an explicit ``--add-dir``
    or ``allow_write``) lifts the protection for that entry.
    """
    out: list[str | os.PathLike[str]] = []
    if ctx.state_dir is not None:
        out += [Path(ctx.state_dir) / part for part in _STATE_PARTS]
    out += ctx.secrets
    explicit = _real_roots(ctx.write_roots)
    return [p for p in _real_roots(out) if not any(_under(r, p) for r in explicit)]


def resolve_write(ctx: ToolContext, path: str | os.PathLike[str]) -> Path:
    """The real path a writer may use for ``path``, or raise :class:`PathDenied`."""
    _check_text(path)
    real = real_path(path, base_dir(ctx))
    for guarded in protected_paths(ctx):
        if _under(real, guarded):
            raise PathDenied(
                f"writing {os.fspath(path)!r} is not allowed: {guarded} holds Reasonix's own "
                "sessions, memory or secrets, which file tools never change"
            )
    roots = write_roots(ctx)
    if any(_under(real, r) for r in roots):
        return real
    scope = ctx.extra.get("write_scope")
    if scope is not None:
        return _ask_for_scope(ctx, scope, path, real)
    listed = ", ".join(str(r) for r in roots) or "(none)"
    if ctx.extra.get("write_paths") is not None:  # a sub-agent bound to its write claim
        raise PathDenied(
            f"writing {os.fspath(path)!r} is not allowed: it resolves to {real}, outside this "
            f"sub-agent's write claim ({listed}); change only paths inside the claim"
        )
    raise PathDenied(
        f"writing {os.fspath(path)!r} is not allowed: it resolves to {real}, outside the "
        f"writable roots ({listed}). Write inside the workspace, or ask the user to add the "
        "directory with --add-dir or [sandbox].allow_write."
    )


def _ask_for_scope(ctx: ToolContext, scope: Any, path: str | os.PathLike[str], real: Path) -> Path:
    """CFG-13: ask (through the run's ScopeGate) to make the target's directory writable.

    Headless runs have no approver, so the gate refuses and names ``--add-dir``.
    A session or project grant also widens ``ctx.write_roots``, which the bash
    sandbox shares, so later calls and sandboxed commands see the same scope.
    """
    directory = real.parent
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent  # ask for what exists: the tool creates the rest
    outcome = scope.request(str(directory), f"a file tool needs to write {os.fspath(path)}")
    if not outcome.allowed:
        raise PathDenied(f"writing {os.fspath(path)!r} is not allowed: {outcome.message}")
    if scope.within(str(directory)) and directory not in ctx.write_roots:
        ctx.write_roots.append(directory)  # granted for the session (or the project)
    return real


def _forbidding_entry(real: Path, lexical: Path, roots: list[Path]) -> Path | None:
    for root in roots:
        if _under(real, root) or _under(lexical, root):
            return root
    return None


def resolve_read(ctx: ToolContext, path: str | os.PathLike[str]) -> Path:
    """The real path a reader may use for ``path``, or raise :class:`PathDenied`.

    Only ``forbid_read`` refuses a read; paths outside the workspace are allowed.
    """
    _check_text(path)
    real = real_path(path, base_dir(ctx))
    lexical = Path(os.path.normpath(os.path.join(base_dir(ctx), os.path.expanduser(path))))
    entry = _forbidding_entry(real, lexical, forbidden_roots(ctx))
    if entry is not None and entry in _secrets(ctx):
        raise PathDenied(
            f"reading {os.fspath(path)!r} is not allowed: {entry} holds Reasonix's own "
            "secrets (provider keys, tokens, password hashes), which no tool ever shows"
        )
    if entry is not None:
        raise PathDenied(
            f"reading {os.fspath(path)!r} is forbidden by [sandbox].forbid_read ({entry}); "
            "do not try to read it another way"
        )
    return real


def is_read_forbidden(ctx: ToolContext, path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is at or below a ``forbid_read`` entry (for ls/glob/grep filters)."""
    roots = forbidden_roots(ctx)
    if not roots:
        return False
    try:
        real = real_path(path, base_dir(ctx))
    except PathDenied:
        return True  # unresolvable: safer to hide it than to show it
    lexical = Path(os.path.normpath(os.path.join(base_dir(ctx), os.path.expanduser(path))))
    return _forbidding_entry(real, lexical, roots) is not None


def display_path(ctx: ToolContext, path: Path) -> str:
    """``path`` relative to the base directory when below it, else absolute (for messages)."""
    base = Path(os.path.realpath(base_dir(ctx)))
    try:
        rel = path.relative_to(base)
    except ValueError:
        return str(path)
    return str(rel) if str(rel) != "." else "."
