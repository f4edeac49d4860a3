"""The SSH_ASKPASS shim: ssh's prompts reach a callback in this process.

ssh runs ``$SSH_ASKPASS "<prompt>"`` (forced by ``SSH_ASKPASS_REQUIRE=force``)
for host-key confirmation, passphrases and passwords. Our shim is a tiny
script that sends the prompt over a private Unix socket to a listener thread
here, which calls ``on_prompt(kind, text)`` and sends the answer back. The
answer never appears in argv or the environment, and ``remote`` never reads
the terminal: the caller's callback decides. A callback that raises refuses
that prompt and is kept in :attr:`AskpassServer.failure`, so the caller can
report it (:class:`~reasonix.remote.errors.PromptFailed`).
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["AskpassServer", "PromptCallback", "prompt_kind"]

# kind is "hostkey", "passphrase", "password" or "other"; return None to refuse.
PromptCallback = Callable[[str, str], "str | None"]

_SHIM = """\
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["REASONIX_ASKPASS_SOCKET"])
s.sendall((sys.argv[1] if len(sys.argv) > 1 else "").encode("utf-8", "replace") + b"\\0")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
if not data.startswith(b"+"):
    sys.exit(1)
sys.stdout.write(data[1:].decode("utf-8", "replace") + "\\n")
"""


def prompt_kind(text: str) -> str:
    """Classify one ssh prompt text."""
    low = text.lower()
    if "continue connecting" in low or ("fingerprint" in low and "yes/no" in low):
        return "hostkey"
    if "passphrase" in low:
        return "passphrase"
    if "password" in low:
        return "password"
    return "other"


class AskpassServer:
    """Listen for the shim; one instance per connection attempt (a context manager)."""

    def __init__(self, directory: Path, on_prompt: PromptCallback | None) -> None:
        self._on_prompt = on_prompt
        token = secrets.token_hex(6)
        self.socket_path = str(directory / f"ask-{token}")
        self.shim_path = str(directory / f"askpass-{token}")
        self.prompts: list[tuple[str, str]] = []
        # (kind, exception) of the first prompt whose callback raised
        self.failure: tuple[str, Exception] | None = None
        self._sock = socket.socket(socket.AF_UNIX)
        self._sock.bind(self.socket_path)
        os.chmod(self.socket_path, 0o600)
        self._sock.listen(4)
        fd = os.open(self.shim_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700)
        with os.fdopen(fd, "w") as fh:
            fh.write(f"#!{sys.executable}\n{_SHIM}")
        self._thread = threading.Thread(target=self._serve, name="askpass", daemon=True)
        self._closed = False
        self._thread.start()

    def env(self) -> dict[str, str]:
        """Variables that route ssh's prompts to this server."""
        return {
            "SSH_ASKPASS": self.shim_path,
            "SSH_ASKPASS_REQUIRE": "force",
            "REASONIX_ASKPASS_SOCKET": self.socket_path,
            "DISPLAY": os.environ.get("DISPLAY", ":0"),
        }

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        data = b""
        while not data.endswith(b"\0"):
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
        text = data.rstrip(b"\0").decode("utf-8", "replace")
        kind = prompt_kind(text)
        self.prompts.append((kind, text))
        answer: str | None = None
        if self._on_prompt is not None:
            try:
                answer = self._on_prompt(kind, text)
            except Exception as err:  # noqa: BLE001 - reported by the caller (see failure)
                # ssh gets a refusal at once (never a hang); the error itself is kept so
                # the connection reports it instead of a misleading "not confirmed".
                self.failure = (kind, err)
                answer = None
        reply = b"-" if answer is None else b"+" + answer.encode("utf-8")
        try:
            conn.sendall(reply)
        except OSError:
            pass

    def close(self) -> None:
        """Stop listening and remove the socket and shim."""
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self._thread.join(timeout=2)
        for path in (self.socket_path, self.shim_path):
            try:
                os.unlink(path)
            except OSError:
                pass

    def __enter__(self) -> AskpassServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
