"""Write claims: the one source of truth for scheduling and enforcement (spec §3.12).

A claim is a set of real paths — each resolved through its deepest existing
ancestor with symlinks expanded (SUB-13), so neither ``claim/../x`` nor an
in-claim symlink pointing outside can launder a write — or the whole
workspace (no ``write_paths``, SUB-17). The child's path-aware writers get
the real paths as ``ctx.extra["write_paths"]``, which replaces their write
roots (:func:`reasonix.tool.paths.write_roots`); after the run the host
compares its recorded mutations with :meth:`WriteClaim.covers`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from reasonix.errors import PathDenied, UsageError
from reasonix.lazy import dataclass
from reasonix.tool.paths import real_path

__all__ = ["WriteClaim", "resolve_claim"]


def _under(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


@dataclass(frozen=True)
class WriteClaim:
    """Real paths a writer child may change; ``whole`` = the entire workspace."""

    workspace: Path
    paths: tuple[Path, ...] = ()
    whole: bool = False

    def covers(self, real: Path) -> bool:
        """True when ``real`` (already resolved) lies inside the claim."""
        roots = (self.workspace,) if self.whole else self.paths
        return any(_under(real, r) for r in roots)

    def overlaps(self, other: WriteClaim) -> bool:
        """True when two writers with these claims could touch the same file."""
        if self.whole or other.whole:
            return True
        return any(_under(a, b) or _under(b, a) for a in self.paths for b in other.paths)

    def within(self, outer: WriteClaim) -> bool:
        """True when every path of this claim lies inside ``outer`` (nested narrowing)."""
        if outer.whole:
            return self.whole or all(outer.covers(p) for p in self.paths)
        return not self.whole and all(outer.covers(p) for p in self.paths)

    def shown(self) -> str:
        """The claim for receipts: workspace-relative paths, or "the whole workspace"."""
        if self.whole:
            return "the whole workspace"
        return ", ".join(_rel(p, self.workspace) for p in self.paths)


def _rel(path: Path, workspace: Path) -> str:
    try:
        rel = path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)
    return rel or "."


def resolve_claim(
    write_paths: Sequence[str] | None, workspace: Path, roots: Iterable[Path] = ()
) -> WriteClaim:
    """Resolve ``write_paths`` (relative to ``workspace``) into a claim.

    None claims the whole workspace. Each path must resolve inside the
    workspace or another writable root (``roots``); otherwise UsageError, so a
    bad claim fails before anything starts.
    """
    ws = Path(workspace).resolve()
    if write_paths is None:
        return WriteClaim(ws, (), True)
    if not write_paths:
        raise UsageError("write_paths is empty: name at least one path, or omit it")
    allowed = [ws, *(Path(r).resolve() for r in roots)]
    out: list[Path] = []
    for raw in write_paths:
        if not isinstance(raw, str) or not raw.strip():
            raise UsageError(f"write_paths: {raw!r} is not a path")
        try:
            real = real_path(raw.strip(), ws)
        except PathDenied as err:
            raise UsageError(f"write_paths: {err}") from None
        if not any(_under(real, a) for a in allowed):
            raise UsageError(
                f"write_paths: {raw!r} resolves to {real}, outside the workspace and the "
                "writable roots"
            )
        if real not in out:
            out.append(real)
    return WriteClaim(ws, tuple(out), False)
