"""The ripgrep engine of the grep tool.

ripgrep's defaults are pinned with flags (no config file, no global or
``.git/info/exclude`` ignores, ``.gitignore`` honoured without a git repo) so
its filtering equals the Python walker's, and ``--null`` output is parsed into
the same :class:`FileHits` the Python engine returns.
"""

from __future__ import annotations

import os
import subprocess

from reasonix.cancel import Cancel
from reasonix.errors import Cancelled
from reasonix.tool.builtin._grep_engine import FileHits, GrepQuery, compile_pattern

__all__ = ["rg_argv", "search_rg"]

_RG_BASE = (
    "--null",
    "--line-number",
    "--no-heading",
    "--with-filename",
    "--color",
    "never",
    "--no-config",  # a user's RIPGREP_CONFIG_PATH must not change results
    "--no-require-git",  # honour .gitignore outside git repos, like the Python walker
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--no-messages",
)


def rg_argv(rg: str, q: GrepQuery, mode: str | None = None) -> list[str]:
    """The ripgrep command line for ``q`` (``mode`` overrides ``q.mode``); root last."""
    mode = mode or q.mode
    argv = [rg, *_RG_BASE]
    if q.ignore_case:
        argv.append("--ignore-case")
    if mode == "files_with_matches":
        argv.append("--files-with-matches")
    elif mode == "count":
        argv.append("--count")
    elif q.context:
        argv += ["--before-context", str(q.before), "--after-context", str(q.after)]
    return [*argv, "--regexp", q.pattern, "--", q.root]


def search_rg(
    rg: str, q: GrepQuery, cancel: Cancel, cap: int | None = None
) -> list[FileHits] | None:
    """Search with ripgrep; None when ripgrep cannot run this query (use Python).

    ripgrep runs multi-threaded (unordered); results are sorted here. In
    content mode with a ``cap`` a first ``--count`` pass sizes the result, and
    only the files holding the first ``cap`` matches are searched for lines:
    parsing a million matching lines in Python would cost more than the search.
    """
    compile_pattern(q.pattern, q.ignore_case)  # same validation as the Python engine
    single_file = not os.path.isdir(q.root)
    if q.mode != "content" or cap is None or single_file:
        return _rg_pass(rg, q, q.mode, [q.root], cancel)
    counted = _rg_pass(rg, q, "count", [q.root], cancel)
    if counted is None:
        return None
    wanted: list[str] = []
    total = 0
    for h in counted:
        if total >= cap:
            break
        wanted.append(h.path)
        total += h.count
    lines = _rg_pass(rg, q, "content", wanted, cancel, filtered=True) if wanted else []
    by_path = {h.path: h for h in lines or []}
    for h in counted:
        found = by_path.get(h.path)
        if found is not None:
            h.lines = found.lines
    return counted


def _rg_pass(
    rg: str,
    q: GrepQuery,
    mode: str,
    paths: list[str],
    cancel: Cancel,
    *,
    filtered: bool = False,
) -> list[FileHits] | None:
    env = dict(os.environ)
    env.pop("RIPGREP_CONFIG_PATH", None)
    argv = rg_argv(rg, q, mode)
    try:
        proc = subprocess.Popen(
            [*argv[:-1], *paths],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
    except OSError:
        return None
    unregister = cancel.on_cancel(proc.kill)
    try:
        out, _err = proc.communicate()
    finally:
        unregister()
    if cancel.cancelled:
        raise Cancelled(cancel.reason or "cancelled")
    if proc.returncode == 2 and not out:
        return None  # e.g. a regex feature ripgrep lacks (look-around): Python decides
    hits = _parse_rg(out, mode)
    keep: list[FileHits] = []
    prefix_len = len(q.root) + 1
    single_file = not os.path.isdir(q.root)
    for h in hits.values():
        if not filtered:
            if q.forbidden is not None and q.forbidden(h.path):
                continue
            if not single_file and q.include is not None and not q.include(h.path[prefix_len:]):
                continue
        keep.append(h)
    keep.sort(key=lambda h: h.path.split("/"))
    return keep


def _parse_rg(out: bytes, mode: str) -> dict[str, FileHits]:
    hits: dict[str, FileHits] = {}
    if mode == "files_with_matches":
        for raw in out.split(b"\0"):
            if raw:
                path = os.fsdecode(raw)
                hits[path] = FileHits(path, count=1)
        return hits
    # Records are `path NUL rest LF`; the path itself may hold a LF, so split at the NUL
    # first and only then at the LF that ends the record.
    pos, size = 0, len(out)
    while pos < size:
        if out.startswith(b"--\n", pos) and mode != "count":
            pos += 3  # the group separator between context blocks
            continue
        nul = out.find(b"\0", pos)
        if nul < 0:
            break
        end = out.find(b"\n", nul)
        end = size if end < 0 else end
        raw_path, rest = out[pos:nul], out[nul + 1 : end]
        pos = end + 1
        path = os.fsdecode(raw_path)
        h = hits.get(path)
        if h is None:
            h = hits[path] = FileHits(path)
        if mode == "count":
            h.count = int(rest or b"0")
            continue
        j = 0
        while j < len(rest) and 48 <= rest[j] <= 57:
            j += 1
        is_match = rest[j : j + 1] == b":"
        h.count += is_match
        h.lines.append((int(rest[:j]), is_match, rest[j + 1 :].decode("utf-8", "replace")))
    return hits
