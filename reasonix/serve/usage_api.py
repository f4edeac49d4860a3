"""``GET /api/usage``: the ``reasonix usage --json`` report for the page's Usage view.

The query takes the CLI's options (``by``, ``since``, ``until``,
``all_projects``) and the answer is the very object ``usage --json`` prints
for the same sessions: the same :func:`build_report`, the same price rule
(the provider's ``prices`` table in the config first, then the preset; a
model with neither is unpriced, never 0). Offline: no request is sent.
A bad option is a :class:`~reasonix.errors.UsageError` (the handler's 400).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


__all__ = ["usage_report"]

_YES = ("1", "true", "yes", "on")
_NO = ("", "0", "false", "no", "off")
_KNOWN = ("by", "since", "until", "all_projects")


def _one(query: dict[str, list[str]], name: str) -> str:
    values = query.get(name) or [""]
    if len(values) > 1:
        raise UsageError(f"usage: give {name} once")
    return values[0].strip()


def _date(name: str, text: str) -> str:
    if not text:
        return ""
    try:
        time.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise UsageError(f"usage: {name} is not a date (YYYY-MM-DD): {text[:40]!r}") from None
    return text


def usage_report(
    workspace: Path, query: dict[str, list[str]], log: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """The report for ``query`` (a parsed query string) over ``workspace``'s sessions;
    ``log`` hears why the config could not be read (the report then uses preset prices)."""
    from reasonix import config as config_mod
    from reasonix.agent.usage_report import GROUPINGS, build_report, price_lookup, session_files
    from reasonix.config.paths import project_slug, state_dir

    unknown = sorted(set(query) - set(_KNOWN))
    if unknown:
        raise UsageError(f"usage: unknown option {unknown[0][:40]!r}; known: {', '.join(_KNOWN)}")
    by = _one(query, "by") or "day"
    if by not in GROUPINGS:
        raise UsageError(f"usage: by must be one of {', '.join(GROUPINGS)}")
    since, until = _date("since", _one(query, "since")), _date("until", _one(query, "until"))
    if since and until and since > until:
        raise UsageError("usage: since is after until")
    flag = _one(query, "all_projects").lower()
    if flag not in _YES + _NO:
        raise UsageError("usage: all_projects must be 1 or 0")
    cfg = None
    try:  # prices only: a config problem must not hide the token counts (as the CLI)
        cfg = config_mod.load(workspace, migrate=False, check_mcp_vars=False)
    except Exception as err:  # noqa: BLE001 - any config error: tokens, preset prices only
        if log is not None:
            log(f"usage: config not read ({err}); preset prices only")
    files = session_files(state_dir() / "sessions", flag in _YES, project_slug(workspace))
    return build_report(files, price_lookup(cfg), by, since, until).as_dict()
