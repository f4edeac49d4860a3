"""Typed errors of the Remote-SSH layer, and the mapping from ssh's exit and stderr."""

from __future__ import annotations

from reasonix.errors import ReasonixError

__all__ = [
    "AuthFailed",
    "ConnectFailed",
    "ConnectionLost",
    "HostKeyChanged",
    "HostKeyRejected",
    "PromptFailed",
    "RemoteError",
    "RemotePythonMissing",
    "classify_ssh_failure",
]


class RemoteError(ReasonixError):
    """A Remote-SSH operation failed."""


class HostKeyChanged(RemoteError):
    """The host presented a key different from the one recorded: possibly an attack."""


class HostKeyRejected(RemoteError):
    """The host key is unknown and was not confirmed."""


class PromptFailed(RemoteError):
    """Answering one of ssh's prompts (host key, passphrase, password) raised an error."""


class AuthFailed(RemoteError):
    """The server refused every credential offered."""


class ConnectFailed(RemoteError):
    """No SSH connection could be made (refused, unresolvable, timed out)."""


class ConnectionLost(RemoteError):
    """An established connection dropped (keepalive timeout, killed master, link cut)."""


class RemotePythonMissing(RemoteError):
    """The remote host has no Python >= 3.10."""


def _last_lines(stderr: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return " / ".join(lines[-n:])


def classify_ssh_failure(host: str, code: int, stderr: str) -> RemoteError:
    """Turn a failed ssh run into a typed error with advice (sshuttle-style mapping)."""
    text = stderr.lower()
    detail = _last_lines(stderr)
    if "remote host identification has changed" in text or (
        "host key for" in text and ("has changed" in text)
    ):
        return HostKeyChanged(
            f"{host}: THE HOST KEY HAS CHANGED — refusing to connect. Someone may be "
            "intercepting the connection, or the server was reinstalled. Verify the new "
            "fingerprint out of band, then remove the old entry with "
            f"`ssh-keygen -R {host}` ({detail})"
        )
    if "host key verification failed" in text:
        return HostKeyRejected(
            f"{host}: the host key was not confirmed, so the connection was refused ({detail})"
        )
    if "permission denied" in text or "too many authentication failures" in text:
        return AuthFailed(
            f"{host}: authentication failed — check the user, the key (-i) and that its "
            f"public half is in the server's authorized_keys ({detail})"
        )
    if any(
        s in text
        for s in (
            "connection refused",
            "could not resolve",
            "no route to host",
            "timed out",
            "network is unreachable",
            "name or service not known",
        )
    ):
        return ConnectFailed(f"{host}: cannot connect ({detail})")
    if code == 255:
        return ConnectionLost(
            f"{host}: the SSH connection was lost ({detail or 'ssh exited with status 255'})"
        )
    return RemoteError(f"{host}: ssh failed with status {code} ({detail})")
