"""``@`` references in a user turn (REF-1…7, D25).

A reference is ``@`` at the start of the text or after whitespace or an
opening bracket, followed by a path (``@src/app.py``, ``@"My Notes.md"``)
or an MCP resource (``@server:scheme://…``). :func:`expand_references`
resolves them and puts one block per reference **before** the typed text
(REF-7), which itself stays as typed::

    <file path="src/app.py">
    …the file, at most 256 KiB…
    </file>

    <directory path="src">
    src/app.py
    src/util/
    …
    </directory>

    <resource ref="docs:file:///guide.md">
    …the resource text…
    </resource>

    explain @src/app.py using @docs:file:///guide.md

Rules: a path is attached only when it exists (REF-2: ``@alice`` and
``bob@example.com`` stay literal; trailing punctuation such as ``@a.py,`` is
tried without it); a file is cut at :data:`FILE_CAP` with a marker, a binary
file is only noted (REF-3); a directory is listed depth-first without
``.git``, ``node_modules``, ``__pycache__`` and gitignored entries (REF-4); a
path under ``[sandbox].forbid_read`` — or one of Reasonix's own secrets
(``config.paths.secret_paths()``) — is refused with a notice (D25); FIFOs
and devices are never opened. Every failure is a notice and the turn is
still sent (REF-5). Resolution does I/O: frontends call it off their UI
thread.

:func:`complete_reference` reads one directory level per call (REF-6) and
offers MCP resources next to the top-level entries; it never offers a secret
or a ``forbid_read`` entry.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.command.api import Completion
from reasonix.errors import PathDenied
from reasonix.lazy import Pattern

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DIR_ENTRIES",
    "FILE_CAP",
    "TOTAL_CAP",
    "complete_reference",
    "expand_references",
    "find_references",
]

FILE_CAP = 256 * 1024  # bytes of one file
TOTAL_CAP = 1024 * 1024  # bytes of every block of one turn together
DIR_ENTRIES = 500  # lines of one directory listing
DIR_DEPTH = 12
COMPLETIONS = 100
_MIN_BLOCK = 4096  # less budget than this left: a fragment would not help, say so instead
_SNIFF = 8192  # a NUL byte in the first 8 KiB marks a binary file
_NOISE = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox", ".idea", ".DS_Store"}
)  # fmt: skip
_TRAILING = ".,;:!?)]}'\""
# @ after the start, whitespace or an opening bracket; a quoted path or a run of non-space.
_REF = Pattern(r'(?:^|(?<=[\s(\[{]))@(?:"([^"\n]+)"|(\S+))')
_RESOURCE = Pattern(r"^([A-Za-z0-9_.-]+):([A-Za-z][A-Za-z0-9+.-]*:\S+)$")

ReadResource = Callable[[str, str], str]


def find_references(text: str) -> list[tuple[int, int, str, bool]]:
    """``(start, end, target, quoted)`` of every ``@`` reference candidate in ``text``."""
    out = []
    for m in _REF.finditer(text):
        quoted = m.group(1) is not None
        out.append((m.start(), m.end(), m.group(1) if quoted else m.group(2), quoted))
    return out


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _tool_ctx(workspace: Path, forbid_read: Iterable[str | os.PathLike[str]]) -> Any:
    from reasonix.config.paths import home_dir, secret_paths
    from reasonix.tool import ToolContext

    return ToolContext(
        workspace=workspace,
        cwd=workspace,
        forbid_read=[Path(p) for p in forbid_read],
        secrets=secret_paths(),  # provider keys, tokens, password hashes: never attached
        config_dir=home_dir(),
    )


def _candidates(target: str, quoted: bool) -> list[str]:
    """The target, then without each trailing punctuation character (``@a.py,`` → ``a.py``)."""
    out = [target]
    while not quoted and target and target[-1] in _TRAILING:
        target = target[:-1]
        if target:
            out.append(target)
    return out


class _Resolver:
    """One turn's resolution: the blocks so far, the notices and the byte budget left."""

    def __init__(
        self,
        workspace: Path,
        forbid_read: Iterable[str | os.PathLike[str]],
        read_resource: ReadResource | None,
    ) -> None:
        self.workspace = workspace
        self.ctx = _tool_ctx(workspace, forbid_read)
        self.read_resource = read_resource
        self.blocks: list[str] = []
        self.notices: list[str] = []
        self.budget = TOTAL_CAP
        self.seen: set[str] = set()

    # -- one reference ----------------------------------------------------------------
    def resolve(self, target: str, quoted: bool) -> None:
        for candidate in _candidates(target, quoted):
            path = Path(os.path.expanduser(candidate))
            full = path if path.is_absolute() else self.workspace / path
            if os.path.lexists(full):
                self._path(candidate, full)
                return
        if self.read_resource is None or quoted:
            return
        for candidate in _candidates(target, quoted):
            m = _RESOURCE.match(candidate)
            if m is not None:
                self._resource(m.group(1), m.group(2))
                return

    def _path(self, typed: str, full: Path) -> None:
        from reasonix.tool.paths import resolve_read

        try:
            real = resolve_read(self.ctx, str(full))
        except PathDenied as err:
            why = "it is under [sandbox].forbid_read" if "forbid_read" in str(err) else str(err)
            self.notices.append(f"@{typed} was not attached: {why}")
            return
        if str(real) in self.seen:
            return
        self.seen.add(str(real))
        shown = self._display(full)
        try:
            info = os.stat(real)
        except OSError as err:
            self.notices.append(f"@{typed} was not attached: {err.strerror or err}")
            return
        if self.budget < _MIN_BLOCK:
            self.notices.append(f"@{typed} was not attached: this message already carries 1 MiB")
            return
        if stat.S_ISDIR(info.st_mode):
            self._add(f'<directory path="{_attr(shown)}">\n{self._listing(real)}\n</directory>')
        elif stat.S_ISREG(info.st_mode):
            try:
                body = self._file(real)
            except OSError as err:
                self.notices.append(f"@{typed} was not attached: {err.strerror or err}")
                return
            self._add(f'<file path="{_attr(shown)}">\n{body}\n</file>')
        else:
            self.notices.append(f"@{typed} was not attached: not a regular file or directory")

    def _resource(self, server: str, uri: str) -> None:
        ref = f"{server}:{uri}"
        if ref in self.seen or self.read_resource is None:
            return
        self.seen.add(ref)
        if self.budget < _MIN_BLOCK:
            self.notices.append(f"@{ref} was not attached: this message already carries 1 MiB")
            return
        try:
            text = self.read_resource(server, uri)
        except Exception as err:  # noqa: BLE001 - REF-5: any failure is a notice, the turn goes on
            self.notices.append(f"@{ref} was not attached: {err}")
            return
        data = text.encode("utf-8", "replace")
        cap = min(FILE_CAP, self.budget)
        if len(data) > cap:
            text = _cut(data, cap) + f"\n[… truncated: the first {cap:,} of {len(data):,} bytes …]"
        self._add(f'<resource ref="{_attr(ref)}">\n{text.rstrip(chr(10))}\n</resource>')

    # -- pieces -----------------------------------------------------------------------
    def _add(self, block: str) -> None:
        self.blocks.append(block)
        self.budget -= len(block.encode("utf-8", "replace"))

    def _display(self, full: Path) -> str:
        lexical = Path(os.path.normpath(full))
        try:
            rel = lexical.relative_to(self.workspace)
        except ValueError:
            return str(lexical)
        return str(rel) if str(rel) != "." else "."

    def _file(self, real: Path) -> str:
        # O_NONBLOCK: a file swapped for a FIFO after the stat still cannot hang us.
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError("not a regular file")
            cap = min(FILE_CAP, self.budget)
            chunks, got = [], 0
            while got <= cap:
                chunk = os.read(fd, min(1 << 16, cap + 1 - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        if b"\x00" in data[:_SNIFF]:
            return f"[binary file, {info.st_size:,} bytes: not shown]"
        if len(data) <= cap:
            return data.decode("utf-8", "replace").rstrip("\n")
        size = max(info.st_size, len(data))
        return _cut(data, cap) + f"\n[… truncated: the first {cap:,} of {size:,} bytes …]"

    def _listing(self, root: Path) -> str:
        from reasonix.tool.builtin._gitignore import IgnoreStack

        lines: list[str] = []
        more = self._walk(root, "", IgnoreStack.for_root(str(root)), 0, lines)
        if not lines:
            return "(empty directory)"
        if more:
            lines.append(f"[… {more} more entries not listed; reference a subdirectory …]")
        return "\n".join(lines)

    def _walk(
        self, directory: Path, prefix: str, ignores: Any, depth: int, lines: list[str]
    ) -> int:
        """List ``directory`` into ``lines`` depth-first; returns how many entries were left out."""
        from reasonix.tool.builtin._gitignore import IGNORE_FILES
        from reasonix.tool.paths import is_read_forbidden

        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return 0
        if depth and any(e.name in (*IGNORE_FILES, ".git") for e in entries):
            ignores = ignores.child(str(directory))
        more = 0
        for e in entries:
            try:
                is_link = e.is_symlink()
                is_dir = not is_link and e.is_dir()
            except OSError:
                continue
            if e.name in _NOISE or (not ignores.empty and ignores.match(e.path, is_dir)):
                continue
            if is_read_forbidden(self.ctx, e.path):
                continue
            if len(lines) >= DIR_ENTRIES:
                more += 1  # counted at this level; deeper levels are not walked any more
                continue
            rel = prefix + e.name
            if is_link:
                try:
                    lines.append(f"{rel} -> {os.readlink(e.path)}")
                except OSError:
                    lines.append(rel)
            elif is_dir:
                lines.append(rel + "/")
                if depth + 1 < DIR_DEPTH:
                    more += self._walk(Path(e.path), rel + "/", ignores, depth + 1, lines)
            else:
                lines.append(rel)
        return more


def _cut(data: bytes, cap: int) -> str:
    """The first ``cap`` bytes as text, cut at a character boundary."""
    end = cap
    while end > 0 and end < len(data) and (data[end] & 0xC0) == 0x80:
        end -= 1  # do not split a UTF-8 sequence
    return data[:end].decode("utf-8", "replace")


def expand_references(
    text: str,
    *,
    workspace: Path | str,
    forbid_read: Iterable[str | os.PathLike[str]] = (),
    read_resource: ReadResource | None = None,
) -> tuple[str, list[str]]:
    """``(text for the model, notices)``: the resolved blocks, then the typed text (REF-7).

    Without any attachable reference the text comes back unchanged. Blocking
    (file reads, ``resources/read``): call it off the UI thread.
    """
    resolver = _Resolver(Path(workspace).resolve(), forbid_read, read_resource)
    for _, _, target, quoted in find_references(text):
        resolver.resolve(target, quoted)
    if not resolver.blocks:
        return text, resolver.notices
    return "\n\n".join([*resolver.blocks, text]), resolver.notices


# -- autocomplete ------------------------------------------------------------------------


def _field(item: Any, key: str) -> str:
    value = item.get(key) if isinstance(item, dict) else getattr(item, key, "")
    return str(value or "")


def _ref_text(path: str) -> str:
    return f'@"{path}"' if any(c.isspace() for c in path) else "@" + path


def complete_reference(
    partial: str,
    *,
    workspace: Path | str,
    resources: Sequence[Any] = (),
    forbid_read: Iterable[str | os.PathLike[str]] = (),
) -> list[Completion]:
    """Candidates for ``@partial``: one ``os.scandir`` of the directory typed so far (REF-6).

    Directories end with ``/`` (completing one descends a level on the next
    call), files complete; hidden entries appear once a ``.`` is typed. At the
    top level the MCP ``resources`` (dicts or objects with ``server``, ``uri``,
    ``name``, ``description``) matching the text appear as ``@server:uri``.
    Reasonix's secrets and ``forbid_read`` entries are never offered: a name
    that would only be refused should not be suggested either.
    """
    from reasonix.tool.paths import is_read_forbidden

    typed = partial[1:] if partial.startswith("@") else partial
    typed = typed[1:] if typed.startswith('"') else typed
    head, sep, name = typed.rpartition("/")
    folder = head + sep
    base = Path(os.path.expanduser(folder)) if folder else Path(".")
    directory = base if base.is_absolute() else Path(workspace) / base
    out: list[Completion] = []
    ctx: Any = None  # built for the first candidate: most calls list a few entries or none
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        entries = []
    for e in entries:
        if not e.name.startswith(name) or (e.name.startswith(".") and not name.startswith(".")):
            continue
        if e.name in _NOISE and not name:
            continue
        if ctx is None:
            ctx = _tool_ctx(Path(workspace), forbid_read)
        if is_read_forbidden(ctx, e.path):
            continue
        try:
            is_dir = e.is_dir()
        except OSError:
            is_dir = False
        text = _ref_text(folder + e.name + ("/" if is_dir else ""))
        out.append(Completion(text, "directory" if is_dir else "file"))
        if len(out) >= COMPLETIONS:
            return out
    low = typed.lower()
    for r in resources:
        ref = f"{_field(r, 'server')}:{_field(r, 'uri')}"
        label = _field(r, "name")
        # a resource URI has slashes too: a typed prefix of it matches at any depth
        if ref.lower().startswith(low) or (not folder and low and low in label.lower()):
            detail = " — ".join(x for x in (label, _field(r, "description")) if x)
            out.append(Completion("@" + ref, detail or "MCP resource"))
    return out[:COMPLETIONS]
