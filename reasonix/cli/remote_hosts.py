"""Remote hosts in the USER config only: ``<home>/config.toml`` ``[[remote.hosts]]``.

A project file can never add a host (a cloned repository must not be able to
point the agent at a machine), so this module reads and writes the user file
and nothing else.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config import paths
from reasonix.config.atomic import write_atomic
from reasonix.config.tomledit import upsert_array_entry
from reasonix.config.tomlparse import loads
from reasonix.errors import ConfigError, UsageError
from reasonix.lazy import Pattern
from reasonix.remote.ssh import Host, validate_host

if TYPE_CHECKING:
    from typing import Any

__all__ = ["find_host", "from_ssh_config", "load_hosts", "parse_target", "remove_host", "save_host"]

_NAME = Pattern(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
TABLE = "remote.hosts"


def _raw_hosts() -> list[dict[str, Any]]:
    path = paths.user_config_path()
    if not path.is_file():
        return []
    data = loads(path.read_text(encoding="utf-8"), str(path))
    remote = data.get("remote", {})
    hosts = remote.get("hosts", []) if isinstance(remote, dict) else []
    if not isinstance(hosts, list):
        raise ConfigError("expected [[remote.hosts]] entries", file=str(path), key=TABLE)
    return [h for h in hosts if isinstance(h, dict)]


def _to_host(raw: dict[str, Any]) -> Host:
    path = str(paths.user_config_path())
    try:
        host = Host(
            name=str(raw["name"]),
            hostname=str(raw["host"]),
            user=str(raw.get("user", "")),
            port=int(raw.get("port", 0)),
            identity=str(raw.get("identity", "")),
            jump=str(raw.get("jump", "")),
            ssh_config=str(raw.get("ssh_config", "")),
            options=tuple(str(o) for o in raw.get("ssh_options", [])),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise ConfigError(f"bad [[remote.hosts]] entry ({err})", file=path, key=TABLE) from None
    validate_host(host)
    return host


def load_hosts() -> list[tuple[Host, list[str]]]:
    """Every configured host with its saved forwards (as typed: see ``parse_spec``)."""
    return [(_to_host(r), [str(f) for f in r.get("forwards", [])]) for r in _raw_hosts()]


def find_host(name: str) -> tuple[Host, list[str]]:
    """The host called ``name`` or a UsageError naming the configured ones."""
    hosts = load_hosts()
    for host, forwards in hosts:
        if host.name == name:
            return host, forwards
    known = ", ".join(h.name for h, _ in hosts) or "none"
    raise UsageError(
        f"unknown remote host {name!r} (configured: {known}); add it with "
        "`reasonix remote add NAME [user@]host`"
    )


def parse_target(target: str) -> tuple[str, str]:
    """``[user@]host`` -> (user, host)."""
    user, at, host = target.rpartition("@")
    return (user, host) if at else ("", target)


def save_host(host: Host, forwards: list[str] | None = None) -> bool:
    """Add or replace the entry; returns True when one was replaced."""
    if not _NAME.match(host.name):
        raise UsageError(f"invalid host name {host.name!r}: letters, digits, . _ - only")
    validate_host(host)
    fields: dict[str, Any] = {"name": host.name, "host": host.hostname}
    for key, value in (("user", host.user), ("port", host.port), ("identity", host.identity),
                       ("jump", host.jump), ("ssh_config", host.ssh_config)):  # fmt: skip
        if value:
            fields[key] = value
    if host.options:
        fields["ssh_options"] = list(host.options)
    if forwards:
        fields["forwards"] = list(forwards)
    path = paths.user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        write_atomic(path, "")
    return upsert_array_entry(path, TABLE, host.name, fields)


def remove_host(name: str) -> bool:
    """Drop the ``[[remote.hosts]]`` block named ``name``; True when one was removed."""
    find_host(name)
    path = paths.user_config_path()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    out: list[str] = []
    i = 0
    removed = False
    while i < len(lines):
        if lines[i].strip() == f"[[{TABLE}]]":
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("["):
                j += 1
            block = "".join(lines[i:j])
            if loads(block.replace(f"[[{TABLE}]]", "", 1), str(path)).get("name") == name:
                removed = True
                i = j
                continue
        out.append(lines[i])
        i += 1
    if removed:
        text = "".join(out)
        loads(text, str(path))  # never leave a broken file
        write_atomic(path, text)
    return removed


def from_ssh_config(alias: str, config_file: str = "", *, read_from: str = "") -> Host:
    """The effective settings of one ``~/.ssh/config`` Host, via ``ssh -G``.

    ``config_file`` is kept with the host (``-F`` on every later call);
    ``read_from`` is the file to query when none is kept: ssh itself finds
    ``~`` through the password database, not ``$HOME``, so the file whose
    Host names were listed is named explicitly.
    """
    query = config_file or read_from
    argv = ["ssh", *(["-F", query] if query else []), "-G", "--", alias]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=15, check=False)
    if proc.returncode != 0:
        raise UsageError(f"ssh -G {alias}: {proc.stderr.strip()}")
    seen: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        seen.setdefault(key.lower(), value)
    identity = ""
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        picked = key.lower() == "identityfile" and not _default_identity(value)
        if picked and Path(value).expanduser().exists():
            identity = value
            break
    jump = seen.get("proxyjump", "")
    port = int(seen.get("port", "22"))
    user = seen.get("user", "")
    return Host(
        name=alias,
        hostname=seen.get("hostname", alias),
        # ssh -G fills in the local login name when the entry names none: keep it unset
        user="" if user == _login_name() else user,
        port=0 if port == 22 else port,
        identity=identity,
        jump="" if jump == "none" else jump,
        ssh_config=config_file,
    )


_DEFAULT_KEYS = ("id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_xmss",
                 "id_dsa")  # fmt: skip


def _login_name() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return ""


def _default_identity(path: str) -> bool:
    """ssh -G lists its default keys for every host: those are not the entry's choice."""
    import pwd

    try:
        home = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return False
    p = Path(path)
    return p.name in _DEFAULT_KEYS and str(p.parent) in (f"{home}/.ssh", "~/.ssh")


def ssh_config_aliases(config_file: Path) -> list[str]:
    """Concrete ``Host`` names in an ssh config (patterns with * or ? are skipped)."""
    if not config_file.is_file():
        return []
    names: list[str] = []
    for line in config_file.read_text(encoding="utf-8", errors="replace").splitlines():
        words = line.strip().split()
        if len(words) >= 2 and words[0].lower() == "host":
            for w in words[1:]:
                if not any(c in w for c in "*?!") and w not in names:
                    names.append(w)
    return names
