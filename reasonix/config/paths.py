"""Where Reasonix keeps its files (CFG-2, CFG-3, CFG-4).

Home holds configuration and provider keys; state (sessions, archives,
memory) and cache may be moved elsewhere by their own variables. Every
function reads the environment on each call so tests and subprocesses that
change ``REASONIX_HOME`` see the change at once.
"""

from __future__ import annotations

import os
from pathlib import Path

from reasonix.charsets import ASCII_ALNUM
from reasonix.config.home import cache_str, home_str
from reasonix.digest import sha256_hex

__all__ = [
    "CONTROL_VARIABLES",
    "archive_dir",
    "cache_dir",
    "commands_dir",
    "env_path",
    "home_dir",
    "memory_dir",
    "project_config_path",
    "project_env_path",
    "project_mcp_path",
    "project_slug",
    "register_secret",
    "secret_paths",
    "sessions_dir",
    "skills_dir",
    "state_dir",
    "user_config_path",
]

# Variables that steer where Reasonix reads and writes; a project .env may not set them (CFG-7).
CONTROL_VARIABLES = frozenset({"REASONIX_HOME", "REASONIX_STATE_HOME", "XDG_CONFIG_HOME"})


def home_dir() -> Path:
    """The Reasonix home: ``$REASONIX_HOME``, else ``~/.reasonix``.

    On Windows the default is ``%APPDATA%\\reasonix`` (CFG-2).
    """
    return Path(home_str())


def state_dir() -> Path:
    """Root for sessions, archives and memory: ``$REASONIX_STATE_HOME``, else the home."""
    override = os.environ.get("REASONIX_STATE_HOME")
    if override:
        return Path(override).expanduser()
    return home_dir()


def cache_dir() -> Path:
    """Disposable data: ``$REASONIX_CACHE_HOME``, else ``<home>/cache``."""
    return Path(cache_str())


def user_config_path() -> Path:
    """The global config file, ``<home>/config.toml``."""
    return home_dir() / "config.toml"


def env_path() -> Path:
    """The provider-key file, ``<home>/.env`` (CFG-6)."""
    return home_dir() / ".env"


# Files Reasonix writes as secrets, relative to the home: provider keys, MCP OAuth tokens,
# serve's password hash, and what `reasonix remote serve` keeps on a remote host
# (its broker token in `.env`, its login token). Everything that writes 0600 and
# holds a credential belongs here; sessions and memory are 0600 for privacy but
# are the user's own records, not credentials.
_SECRET_NAMES = (
    ".env",
    "mcp-oauth",
    "serve-password",
    "remote/serve/.env",
    "remote/serve/token",
    # not a credential, but the user's trust answers: nothing a model runs may read or
    # write it, so a checkout cannot trust itself (config/trust.py)
    "trusted-workspaces",
)
_registered: list[Path] = []  # secrets named at run time (serve's --token-file)


def register_secret(path: str | os.PathLike[str]) -> None:
    """Treat ``path`` as a secret for the rest of this process (serve's ``--token-file``).

    Call it before the runtime is built: the tool context, the bash policy and
    the sandbox read :func:`secret_paths` when they are made.
    """
    absolute = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    if absolute not in _registered:
        _registered.append(absolute)


def secret_paths() -> list[Path]:
    """Every file or directory Reasonix keeps a secret in: the one list (issue 32).

    Model tools never read them, ``@`` references never attach them, the bash
    classifier asks before a command that names them, and the bash/hook jail
    masks them. Paths may not exist; callers resolve symlinks themselves.
    """
    home = home_dir()
    return [home.joinpath(*name.split("/")) for name in _SECRET_NAMES] + list(_registered)


def project_config_path(cwd: Path) -> Path:
    """The project config file, ``<cwd>/reasonix.toml``."""
    return Path(cwd) / "reasonix.toml"


def project_env_path(cwd: Path) -> Path:
    """The project ``.env`` used only for ``${VAR}`` expansion (CFG-7)."""
    return Path(cwd) / ".env"


def project_mcp_path(cwd: Path) -> Path:
    """The project ``.mcp.json`` (Claude Code ``mcpServers`` schema, MCP-21)."""
    return Path(cwd) / ".mcp.json"


def commands_dir() -> Path:
    """User custom slash commands, ``<home>/commands``."""
    return home_dir() / "commands"


def skills_dir() -> Path:
    """User skills, ``<home>/skills``."""
    return home_dir() / "skills"


def archive_dir() -> Path:
    """Archived sessions, ``<state>/archive``."""
    return state_dir() / "archive"


def memory_dir() -> Path:
    """Remembered facts and the history index, ``<state>/memory``."""
    return state_dir() / "memory"


def sessions_dir(workspace: Path) -> Path:
    """``<state>/sessions/<slug>`` for one workspace."""
    return state_dir() / "sessions" / project_slug(workspace)


_SAFE = frozenset(ASCII_ALNUM + "._-")
_SLUG_TAIL = 48  # keep the end of long paths: the project name is the readable part


def _dashed(text: str) -> str:
    """``text`` with each run of characters outside ``[A-Za-z0-9._-]`` made one ``-``
    (what ``re.sub(r"[^A-Za-z0-9._-]+", "-", text)`` gives, without compiling it)."""
    out: list[str] = []
    dash = False
    for ch in text:
        if ch in _SAFE:
            out.append(ch)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    return "".join(out)


def project_slug(path: Path | str) -> str:
    """A stable, filesystem-safe, readable name for a workspace path.

    ``/home/ann/src/My App`` becomes ``home-ann-src-My-App-1a2b3c4d``: the
    readable part may collide after sanitising (``a b`` vs ``a_b``), so a
    short hash of the exact absolute path keeps slugs distinct.
    """
    absolute = os.path.abspath(os.fspath(path))
    readable = _dashed(absolute).strip("-.") or "root"
    if len(readable) > _SLUG_TAIL:
        readable = readable[-_SLUG_TAIL:].lstrip("-.") or "root"
    digest = sha256_hex(absolute.encode("utf-8", "surrogatepass"))[:8]
    return f"{readable}-{digest}"
