"""Who may do what: the checks every request passes before it reaches a handler.

In order: the ``Host`` header (DNS rebinding: on a loopback bind only
loopback names are served), then for every state-changing method the
``Origin`` header (it must be this server's own origin) and the per-launch
CSRF token (``X-Reasonix-CSRF``), then authentication (the login cookie or,
in token mode, ``Authorization: Bearer``). ``X-Forwarded-For/-Proto/-Host``
are read only when ``behind_proxy`` is set. Pure with respect to I/O: a
request is described by its method, path, headers and peer address.
"""

from __future__ import annotations

import ipaddress
from typing import Protocol

from reasonix.lazy import dataclass

from .auth import RateLimiter, Secrets

__all__ = ["CSRF_HEADER", "PUBLIC_PATHS", "Guard", "Headers", "Verdict", "is_loopback"]

CSRF_HEADER = "X-Reasonix-CSRF"
PUBLIC_PATHS = ("/", "/index.html", "/api/hello", "/api/login", "/api/logout")
_SAFE_METHODS = ("GET", "HEAD")


class Headers(Protocol):
    """Request headers with case-insensitive lookup (``http.client.HTTPMessage``, a dict)."""

    def get(self, name: str, default: None = None) -> str | None:
        """The header's value, or None."""
        ...


def is_loopback(host: str) -> bool:
    """Whether a bind address only accepts connections from this machine."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Verdict:
    """A refusal: the HTTP status and a message for the page."""

    status: int
    message: str
    retry_after: float = 0.0


class Guard:
    """The request checks of one launch (see the module docstring)."""

    def __init__(
        self,
        secrets: Secrets,
        *,
        host: str,
        port: int,
        behind_proxy: bool = False,
        limiter: RateLimiter | None = None,
        tunnel: bool = False,
    ) -> None:
        self.secrets, self.port, self.behind_proxy = secrets, port, behind_proxy
        # Behind an SSH -L tunnel the browser's port is the tunnel's local one: the
        # name is still checked (what DNS rebinding changes), the port is not.
        self.tunnel = tunnel
        self.bind = host
        self.limiter = limiter or RateLimiter()
        self.loopback = is_loopback(host)
        names = {"127.0.0.1", "localhost", "[::1]", host if ":" not in host else f"[{host}]"}
        self.local_names = names
        self.local_hosts = {f"{n}:{port}" for n in names}
        self.cookie_name = f"rx_auth_{port}"

    # -- what the request says about itself -----------------------------------
    def client_key(self, peer: str, headers: Headers) -> str:
        """The client for throttling: the peer, or the address our proxy appended."""
        forwarded = headers.get("X-Forwarded-For") if self.behind_proxy else None
        if forwarded:
            return forwarded.split(",")[-1].strip() or peer
        return peer

    def scheme(self, headers: Headers) -> str:
        """``https`` only when a trusted proxy says so."""
        proto = headers.get("X-Forwarded-Proto") if self.behind_proxy else None
        return "https" if (proto or "").split(",")[0].strip().lower() == "https" else "http"

    def host(self, headers: Headers) -> str:
        """The host the browser asked for (``X-Forwarded-Host`` behind a proxy)."""
        forwarded = headers.get("X-Forwarded-Host") if self.behind_proxy else None
        value = (forwarded or "").split(",")[0].strip() or headers.get("Host") or ""
        return value.strip().lower()

    def cookie(self, headers: Headers) -> str:
        """The login cookie's value ("" when absent)."""
        for part in (headers.get("Cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == self.cookie_name:
                return value.strip()
        return ""

    # -- the checks -------------------------------------------------------------
    def host_ok(self, headers: Headers) -> bool:
        """DNS rebinding: a loopback bind answers only to loopback names."""
        host = self.host(headers)
        if not host:
            return False
        if self.loopback and not self.behind_proxy:
            if self.tunnel:
                name, _, port = host.rpartition(":")
                return name in self.local_names and port.isdigit()
            return host in self.local_hosts
        return True  # exposed on purpose: authentication protects it, Origin is checked

    def origin_ok(self, headers: Headers) -> bool:
        """A state-changing request must come from a page of this very origin."""
        origin = (headers.get("Origin") or "").strip().lower()
        return bool(origin) and origin == f"{self.scheme(headers)}://{self.host(headers)}"

    def authenticated(self, headers: Headers, peer: str) -> bool:
        """The login cookie, or in token mode the bearer token (a wrong one counts)."""
        if self.secrets.mode == "none":
            return True
        if self.secrets.cookie_ok(self.cookie(headers)):
            return True
        auth = headers.get("Authorization") or ""
        if self.secrets.mode == "token" and auth[:7].lower() == "bearer ":
            if self.secrets.check_login(auth[7:].strip()):
                return True
            self.limiter.fail(self.client_key(peer, headers))
        return False

    def check(self, method: str, path: str, headers: Headers, peer: str) -> Verdict | None:
        """None when the request may proceed, else why not."""
        if not self.host_ok(headers):
            return Verdict(403, "unexpected Host header (this server answers only to its own name)")
        if method not in _SAFE_METHODS:
            if not self.origin_ok(headers):
                return Verdict(403, "cross-origin request refused (Origin does not match)")
            if not self.secrets.csrf_ok(headers.get(CSRF_HEADER) or ""):
                return Verdict(403, "missing or wrong CSRF token; reload the page")
        if path in PUBLIC_PATHS or path.startswith("/static/"):
            return None
        wait = self.limiter.retry_after(self.client_key(peer, headers))
        if wait > 0 and not self.secrets.cookie_ok(self.cookie(headers)):
            return Verdict(429, "too many failed attempts; try again later", wait)
        if not self.authenticated(headers, peer):
            return Verdict(401, "not logged in: open the URL printed by `reasonix serve`")
        return None

    def cookie_header(self, headers: Headers, *, clear: bool = False) -> str:
        """The ``Set-Cookie`` value after a login (or a logout with ``clear``)."""
        value = "" if clear else self.secrets.cookie
        parts = [f"{self.cookie_name}={value}", "Path=/", "HttpOnly", "SameSite=Strict"]
        if self.scheme(headers) == "https":
            parts.append("Secure")
        if clear:
            parts.append("Max-Age=0")
        return "; ".join(parts)
