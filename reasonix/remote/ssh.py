"""The ssh/sftp command lines, built as pure functions (table-tested).

Every option below says why it is there. The OpenSSH client does the
cryptography, the agent, ProxyJump and ``~/.ssh/config``; we only choose the
flags. One ControlMaster per host carries every later command, forward and
SFTP session, so authentication (and any prompt) happens once.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

from reasonix.errors import UsageError
from reasonix.lazy import dataclass, field

__all__ = [
    "Host",
    "SshOptions",
    "build_argv",
    "control_dir",
    "control_path",
    "validate_host",
]


@dataclass(frozen=True)
class Host:
    """One remote host as the user configured it."""

    name: str
    hostname: str
    user: str = ""
    port: int = 0
    identity: str = ""
    jump: str = ""
    ssh_config: str = ""  # -F FILE ("" = the user's ~/.ssh/config)
    options: tuple[str, ...] = ()  # extra "-o Key=Value" entries

    @property
    def label(self) -> str:
        """``user@host:port`` for messages."""
        who = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{who}{self.hostname}{port}"


@dataclass(frozen=True)
class SshOptions:
    """How one ssh invocation should behave."""

    control_path: str = ""
    master: bool = False  # start the ControlMaster (-M -N)
    tty: bool = False  # -t for an interactive program
    batch: bool = False  # BatchMode: never prompt (probes)
    keepalive: int = 15  # seconds between ServerAlive probes; 0 = off
    connect_timeout: int = 15
    forwards: tuple[str, ...] = field(default_factory=tuple)  # "-L spec" / "-R spec"


def validate_host(host: Host) -> None:
    """Refuse values ssh would read as options (``-oProxyCommand=…`` injection)."""
    for label, value in (("host", host.hostname), ("user", host.user), ("jump", host.jump)):
        if value.startswith("-") or any(c in value for c in "\n\r\0 "):
            raise UsageError(f"invalid {label} {value!r}")
    if not host.hostname:
        raise UsageError("a host name is required")
    if not 0 <= host.port <= 65535:
        raise UsageError(f"invalid port {host.port}")


def _destination(host: Host) -> str:
    return f"{host.user}@{host.hostname}" if host.user else host.hostname


def build_argv(
    host: Host, opts: SshOptions, command: list[str] | None = None, *, program: str = "ssh"
) -> list[str]:
    """The full argv for ``program`` ("ssh" or "sftp") to reach ``host``.

    ``command`` (ssh only) is the remote command, already shell-quoted words.
    """
    validate_host(host)
    sftp = program == "sftp"
    argv = [program]
    if host.ssh_config:
        argv += ["-F", host.ssh_config]
    if host.port:
        argv += ["-P" if sftp else "-p", str(host.port)]
    if host.identity:
        # Only the named key: an agent holding many keys would otherwise hit
        # the server's MaxAuthTries before the right one is offered.
        argv += ["-i", host.identity, "-o", "IdentitiesOnly=yes"]
    if host.jump:
        argv += ["-J", host.jump]
    # TOFU: an unknown key is shown to the user (through the askpass callback)
    # for confirmation; a changed key is always refused by ssh itself.
    argv += ["-o", "StrictHostKeyChecking=ask"]
    if opts.batch:
        argv += ["-o", "BatchMode=yes"]  # probes must fail, not hang on a prompt
    if opts.keepalive:
        # A dead link is noticed within interval * count seconds instead of
        # at the next TCP retransmit timeout (minutes).
        argv += ["-o", f"ServerAliveInterval={opts.keepalive}", "-o", "ServerAliveCountMax=3"]
    argv += ["-o", f"ConnectTimeout={opts.connect_timeout}"]
    if opts.control_path:
        argv += ["-o", f"ControlPath={opts.control_path}"]
        # The master is started explicitly and owned by this process, so no
        # background ssh outlives us (ControlPersist would leave one behind).
        argv += ["-o", f"ControlMaster={'yes' if opts.master else 'no'}"]
        if opts.master:
            argv += ["-o", "ControlPersist=no"]
    for extra in host.options:
        argv += ["-o", extra]
    if not sftp:
        if opts.master:
            argv += ["-N"]  # no remote command: the master only carries channels
            argv += ["-o", "ExitOnForwardFailure=yes"]
        for spec in opts.forwards:
            argv += spec.split(" ", 1)
        argv += ["-t"] if opts.tty else ["-T"]
    argv += ["--", _destination(host)] if not sftp else [_destination(host)]
    if command and not sftp:
        argv += command
    return argv


def control_dir(base: str | None = None) -> Path:
    """A private (0700, ours) directory for control sockets and askpass sockets.

    Socket paths are limited to ~104 bytes, so it lives under the temp dir
    rather than a deep home path.
    """
    root = Path(base) if base else Path(tempfile.gettempdir()) / f"reasonix-ssh-{os.getuid()}"
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise UsageError(f"{root}: not a directory owned by this user; refusing to use it")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(root, 0o700)
    return root


def control_path(directory: Path, host: Host) -> str:
    """The master socket for ``host``: a hash of user, host and port, never the raw name."""
    key = f"{host.user}@{host.hostname}:{host.port}:{host.jump}:{host.identity}"
    return str(directory / ("cm-" + hashlib.sha256(key.encode()).hexdigest()[:20]))
