"""Install this very ``.pyz`` on a remote host and find a Python to run it.

The upload goes to ``~/.reasonix/remote/bin/reasonix-<build>.pyz`` and
happens only when the remote file is missing or its SHA-256 differs, so a
second connection costs one ``sha256sum`` round trip.
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

from reasonix.lazy import dataclass
from reasonix.remote.connection import Connection
from reasonix.remote.errors import RemoteError, RemotePythonMissing
from reasonix.remote.sftpfs import SftpFS

__all__ = ["Installed", "RemoteInfo", "build_id", "find_python", "install", "probe"]

MIN_PYTHON = (3, 10)
_CANDIDATES = ("python3.14", "python3.13", "python3.12", "python3.11", "python3.10", "python3",
               "python")  # fmt: skip

# One round trip: OS, arch, then "path version" for every Python on PATH.
_PROBE = (
    "uname -s; uname -m; for p in "
    + " ".join(_CANDIDATES)
    + '; do q=$(command -v "$p" 2>/dev/null) || continue; '
    'v=$("$q" -c "import sys; print(\'%d.%d.%d\' % sys.version_info[:3])" 2>/dev/null) '
    '|| v=unknown; echo "py $q $v"; done'
)


@dataclass(frozen=True)
class RemoteInfo:
    """What ``probe`` found on the host."""

    os: str
    arch: str
    pythons: tuple[tuple[str, str], ...]  # (path, version) in preference order

    @property
    def python(self) -> tuple[str, str] | None:
        """The first Python >= 3.10, or None."""
        for path, version in self.pythons:
            if _version_tuple(version) >= MIN_PYTHON:
                return path, version
        return None


@dataclass(frozen=True)
class Installed:
    """Where the .pyz lives remotely and whether this call uploaded it."""

    path: str
    python: str
    uploaded: bool
    home: str


def _version_tuple(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(".")[:2])
    except ValueError:
        return (0,)


def probe(conn: Connection) -> RemoteInfo:
    """Ask the host for its OS, architecture and Pythons."""
    res = conn.run(_PROBE, timeout=60)
    lines = res.stdout.decode("utf-8", "replace").splitlines()
    if len(lines) < 2:
        raise RemoteError(
            f"{conn.host.name}: the remote shell did not answer ({res.stderr.strip()})"
        )
    seen: dict[str, str] = {}
    for line in lines[2:]:
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0] == "py" and parts[1] not in seen:
            seen[parts[1]] = parts[2]
    return RemoteInfo(lines[0].strip(), lines[1].strip(), tuple(seen.items()))


def find_python(conn: Connection, info: RemoteInfo | None = None) -> tuple[str, str]:
    """The remote Python to use, or RemotePythonMissing listing what was found."""
    info = info or probe(conn)
    found = info.python
    if found is None:
        listed = ", ".join(f"{p} ({v})" for p, v in info.pythons) or "none on PATH"
        raise RemotePythonMissing(
            f"{conn.host.name}: Reasonix needs Python >= 3.10 on the remote host; found: "
            f"{listed}. Install python3.10 or newer there (e.g. `apt install python3`)."
        )
    return found


def build_id(pyz: Path) -> str:
    """The build name: the first 16 hex digits of the archive's SHA-256."""
    return _sha256(pyz)[:16]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def install(conn: Connection, pyz: Path) -> Installed:
    """Make sure the remote has this exact ``pyz``; upload it only when it does not."""
    if not pyz.is_file():
        raise RemoteError(f"{pyz}: no such .pyz to install on the remote host")
    python, _ = find_python(conn)
    home = conn.home()
    bin_dir = f"{home}/.reasonix/remote/bin"
    target = f"{bin_dir}/reasonix-{build_id(pyz)}.pyz"
    want = _sha256(pyz)
    check = (
        f'f={shlex.quote(target)}; [ -f "$f" ] || exit 0; '
        f"{shlex.quote(python)} -c 'import hashlib,sys; "
        f'print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())\' "$f"'
    )
    have = conn.run(check).stdout.decode().strip()
    if have == want:
        return Installed(target, python, False, home)
    fs = SftpFS(conn)
    conn.run(f"umask 077; mkdir -p {shlex.quote(bin_dir)}")
    fs.put(pyz, target, mode=0o700)
    have = conn.run(check).stdout.decode().strip()
    if have != want:
        raise RemoteError(f"{conn.host.name}: the uploaded {target} does not match (checksum)")
    return Installed(target, python, True, home)
