"""Secrets of ``reasonix serve``: the launch token, the password hash, login throttling.

* **token** — 32 random bytes (URL-safe text), printed once in the URL's
  fragment; ``--token-file`` keeps it across launches in a 0600 file.
* **password** — only a PBKDF2-SHA256 hash is stored
  (``pbkdf2_sha256$<iterations>$<salt>$<hash>``, base64), in
  ``<home>/serve-password`` (0600), written by ``reasonix serve --set-password``.
* **cookie** — after a login the browser holds an HMAC of a fixed label keyed
  by the token (or by the stored hash), so it survives a restart with the same
  secret and stops working when the secret changes. Every comparison is
  constant-time (``hmac.compare_digest``).
* **throttle** — failed logins per client: after ``limit`` failures within
  ``window`` seconds that client is refused (HTTP 429) until the window passes.
  The throttle is consulted *before* the slow hash and a client has at most one
  login being checked at a time (:meth:`RateLimiter.begin`), so concurrent
  guesses are refused without hashing; at most :data:`MAX_VERIFYING` password
  checks wait or run at once across all clients (:class:`LoginBusy` beyond).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import stat
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from reasonix.errors import ConfigError, ReasonixError

__all__ = [
    "MAX_VERIFYING",
    "PASSWORD_ITERATIONS",
    "LoginBusy",
    "RateLimiter",
    "Secrets",
    "hash_password",
    "load_password_hash",
    "new_token",
    "password_path",
    "read_or_create_token",
    "save_password_hash",
    "verify_password",
]

PASSWORD_ITERATIONS = 600_000  # OWASP's 2023 figure for PBKDF2-HMAC-SHA256
MIN_PASSWORD = 8
MIN_TOKEN = 16
_COOKIE_LABEL = b"reasonix-serve-login-v1"
# Password checks running or queued at once, all clients together: one hash runs at a
# time (a 600k-iteration PBKDF2 takes a core for a fraction of a second), a few wait.
MAX_VERIFYING = 4


class LoginBusy(ReasonixError):
    """Too many password checks are already running or queued; try again shortly."""


def new_token() -> str:
    """A fresh launch token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def _private(path: Path) -> bool:
    if os.name != "posix":
        return True
    return not stat.S_IMODE(path.stat().st_mode) & 0o077


def read_or_create_token(path: Path) -> str:
    """The token kept in ``path``; a new one is written there (mode 0600) if it is absent.

    Refuses a file other users can read, or one too short to be a secret.
    """
    path = Path(path).expanduser()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError as err:
        raise ConfigError(f"--token-file {path}: {err.strerror or err}") from err
    else:
        token = new_token()
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(token + "\n")
        return token
    if not path.is_file():
        raise ConfigError(f"--token-file {path}: not a regular file")
    if not _private(path):
        raise ConfigError(f"--token-file {path}: readable by other users; run chmod 600 {path}")
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"--token-file {path}: cannot read it ({err})") from err
    if len(token) < MIN_TOKEN or any(c.isspace() for c in token):
        raise ConfigError(
            f"--token-file {path}: expected one token of at least {MIN_TOKEN} characters"
        )
    return token


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_password(password: str, *, iterations: int = PASSWORD_ITERATIONS) -> str:
    """The storable PBKDF2-SHA256 hash of ``password`` with a random 16-byte salt."""
    salt = os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    return f"pbkdf2_sha256${iterations}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    """True when ``password`` matches ``stored`` (compared in constant time)."""
    try:
        scheme, rounds, salt_text, hash_text = stored.strip().split("$")
        iterations = int(rounds)
        salt, expected = base64.b64decode(salt_text), base64.b64decode(hash_text)
    except ValueError:
        return False
    if scheme != "pbkdf2_sha256" or not 1 <= iterations <= 10_000_000:
        return False
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    return hmac.compare_digest(digest, expected)


def password_path() -> Path:
    """Where the password hash lives: ``<home>/serve-password``."""
    from reasonix.config import paths

    return paths.home_dir() / "serve-password"


def save_password_hash(password: str, path: Path | None = None) -> Path:
    """Hash ``password`` and store only the hash (mode 0600); returns the file."""
    from reasonix.config.atomic import write_atomic

    if len(password) < MIN_PASSWORD:
        raise ConfigError(f"the password must have at least {MIN_PASSWORD} characters")
    target = path or password_path()
    write_atomic(target, hash_password(password) + "\n", mode=0o600)
    return target


def load_password_hash(path: Path | None = None) -> str:
    """The stored hash; ConfigError when none is set or the file is unsafe."""
    target = path or password_path()
    if not target.is_file():
        raise ConfigError(
            f"auth_mode 'password' needs a password: run `reasonix serve --set-password` "
            f"(nothing at {target})"
        )
    if not _private(target):
        raise ConfigError(f"{target} is readable by other users; run chmod 600 {target}")
    stored = target.read_text(encoding="utf-8").strip()
    if not stored.startswith("pbkdf2_sha256$"):
        raise ConfigError(f"{target}: not a password hash; run `reasonix serve --set-password`")
    return stored


class RateLimiter:
    """Failed attempts per client key within a sliding window (thread-safe)."""

    def __init__(
        self,
        limit: int = 5,
        window: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        self.limit, self.window, self.clock, self.max_keys = limit, window, clock, max_keys
        self._fails: dict[str, deque[float]] = {}
        self._pending: set[str] = set()  # clients with a login being checked right now
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        times = self._fails.get(key) or deque()
        while times and now - times[0] >= self.window:
            times.popleft()
        return times

    def retry_after(self, key: str) -> float:
        """Seconds until ``key`` may try again (0: it may try now)."""
        with self._lock:
            now = self.clock()
            times = self._recent(key, now)
            if len(times) < self.limit:
                return 0.0
            return max(0.0, self.window - (now - times[0]))

    def begin(self, key: str) -> float:
        """Reserve one login attempt for ``key`` before any slow check runs.

        0.0: go ahead, and report the outcome with :meth:`end`. Otherwise the
        seconds to wait: the client is over its failure budget, or one of its
        attempts is still being checked (an attempt in flight counts as spent,
        so concurrent guesses cannot all slip past the throttle).
        """
        with self._lock:
            now = self.clock()
            if key in self._pending:
                return 1.0
            times = self._recent(key, now)
            if len(times) >= self.limit:
                return max(0.0, self.window - (now - times[0]))
            self._pending.add(key)
            return 0.0

    def end(self, key: str, ok: bool | None) -> None:
        """Settle an attempt reserved by :meth:`begin`: True succeeded, False failed,
        None was never checked (it counts as neither)."""
        with self._lock:  # one critical section: no begin() between release and count
            self._pending.discard(key)
            if ok is True:
                self._fails.pop(key, None)
            elif ok is False:
                self._count(key)

    def fail(self, key: str) -> None:
        """Count one failed attempt of ``key``."""
        with self._lock:
            self._count(key)

    def _count(self, key: str) -> None:
        now = self.clock()
        if key not in self._fails and len(self._fails) >= self.max_keys:
            self._prune(now)
        times = self._recent(key, now)
        times.append(now)
        self._fails[key] = times

    def succeed(self, key: str) -> None:
        """A correct login clears the client's failures."""
        with self._lock:
            self._fails.pop(key, None)

    def _prune(self, now: float) -> None:
        for k in [k for k, t in self._fails.items() if not t or now - t[-1] >= self.window]:
            del self._fails[k]
        while len(self._fails) >= self.max_keys:  # still full: forget the oldest client
            self._fails.pop(next(iter(self._fails)))


class Secrets:
    """The launch's secrets: the auth mode, the login secret, the CSRF token, the cookie."""

    def __init__(self, mode: str, *, token: str = "", password_hash: str = "") -> None:
        self.mode = mode
        self.token = token
        self.password_hash = password_hash
        self.csrf = secrets.token_urlsafe(24)  # per launch, even under auth_mode none
        key = (token or password_hash or secrets.token_hex(32)).encode("utf-8")
        self.cookie = hmac.new(key, _COOKIE_LABEL, hashlib.sha256).hexdigest()
        self._verify_lock = threading.Lock()  # one PBKDF2 at a time: no CPU exhaustion
        # ...and a bounded queue before it, so unauthenticated clients cannot pile up work.
        self._verify_slots = threading.BoundedSemaphore(MAX_VERIFYING)

    def check_login(self, secret: str) -> bool:
        """Whether ``secret`` is the token (token mode) or the password (password mode).

        Raises :class:`LoginBusy` (password mode) when :data:`MAX_VERIFYING`
        checks are already running or waiting; the secret is then not checked.
        """
        if self.mode == "token":
            return hmac.compare_digest(secret.encode("utf-8"), self.token.encode("utf-8"))
        if self.mode == "password":
            if not self._verify_slots.acquire(blocking=False):
                raise LoginBusy("the server is busy checking other logins; try again shortly")
            try:
                with self._verify_lock:
                    return verify_password(secret, self.password_hash)
            finally:
                self._verify_slots.release()
        return False

    def cookie_ok(self, value: str) -> bool:
        """Whether a cookie value is this launch's login cookie."""
        return bool(value) and hmac.compare_digest(value.encode(), self.cookie.encode())

    def csrf_ok(self, value: str) -> bool:
        """Whether a request carries this launch's CSRF token."""
        return bool(value) and hmac.compare_digest(value.encode(), self.csrf.encode())
