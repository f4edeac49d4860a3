"""web_fetch: GET one http(s) URL and return its text.

Caps: 5 MiB download, 15 s per request and 30 s overall, 5 redirects, each
redirect target re-checked (http/https only, no private or link-local
address). Loopback stays reachable on purpose: the agent can reach a local dev
server through bash anyway. The address check runs before connecting, so a
DNS answer that changes between check and connect is not caught.
"""

from __future__ import annotations

import codecs
import ipaddress
import re
import socket
import time
import urllib.error
import urllib.request
import zlib
from email.message import Message
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from reasonix.errors import ToolError
from reasonix.tool import ToolContext, ToolResult, register_builtin
from reasonix.tool.base import FunctionTool

if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_BYTES", "MAX_REDIRECTS", "TOOL", "fetch"]

MAX_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 5
REQUEST_TIMEOUT = 15.0
TOTAL_TIMEOUT = 30.0
_CHUNK = 65536
_USER_AGENT = "reasonix-web-fetch/1.0"
_TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-javascript",
    "application/ld+json",
    "application/yaml",
    "application/toml",
    "+json",
    "+xml",
)
# RFC 6598 shared space: some clouds serve instance metadata there.
_CGNAT = ipaddress.ip_network("100.64.0.0/10")

DESCRIPTION = (
    "Fetch a URL over HTTP or HTTPS and return its text content. HTML pages are reduced to "
    "readable text (headings, lists, links and code blocks kept; scripts and styles "
    "dropped); JSON, plain text and other text bodies come back verbatim; binary bodies are "
    "described, not shown. Only http:// and https:// URLs; at most 5 redirects; downloads "
    "are capped at 5 MB. Use to read documentation pages, API responses or files hosted "
    "somewhere the local file system can't reach; use read_file for local files."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {
            "type": "string",
            "description": "Absolute URL beginning with http:// or https://.",
        },
    },
    "required": ["url"],
}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Surface 3xx answers so every hop is checked by us, not followed blindly."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise ToolError(
            f"refusing {url!r}: only http:// and https:// URLs can be fetched "
            "(use read_file for local files)"
        )
    host = parts.hostname
    if not host:
        raise ToolError(f"refusing {url!r}: no host name")
    try:
        infos = socket.getaddrinfo(host, parts.port or 80, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        return  # let the request report the DNS failure (or a proxy resolve it)
    for info in infos:
        addr: ipaddress.IPv4Address | ipaddress.IPv6Address
        addr = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped  # ::ffff:a.b.c.d is the IPv4 host in disguise
        if addr.is_loopback:
            continue
        if addr.is_private or addr.is_link_local or addr.is_unspecified or addr in _CGNAT:
            raise ToolError(f"refusing to fetch internal address {host} ({addr})")


def _read_body(resp: Any, ctx: ToolContext, deadline: float) -> tuple[bytes, bool]:
    """Read up to MAX_BYTES; (body, truncated). Checks the deadline and cancel per chunk."""
    # read1 returns what has arrived; read(n) would wait for n bytes and let a
    # slow drip outlast the deadline.
    read = getattr(resp, "read1", resp.read)
    chunks: list[bytes] = []
    size = 0
    while True:
        ctx.cancel.raise_if_cancelled()
        if time.monotonic() > deadline:
            raise ToolError(f"timed out after {TOTAL_TIMEOUT:.0f}s while downloading")
        try:
            chunk = read(_CHUNK)
        except (OSError, ValueError, AttributeError):
            ctx.cancel.raise_if_cancelled()  # the cancel callback closed the response
            raise
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_BYTES:
            return b"".join(chunks)[:MAX_BYTES], True


def fetch(url: str, ctx: ToolContext) -> tuple[str, int, Message, bytes, bool]:
    """GET ``url`` following checked redirects: (final url, status, headers, body, truncated)."""
    deadline = time.monotonic() + TOTAL_TIMEOUT
    # Built per call so proxy variables are read now, not at import time.
    opener = urllib.request.build_opener(_NoRedirect())
    for _hop in range(MAX_REDIRECTS + 1):
        _check_url(url)
        req = urllib.request.Request(
            url,
            headers={
                "User-Agent": _USER_AGENT,
                "Accept": "text/html,text/plain,text/markdown,application/json,*/*;q=0.5",
            },
        )
        timeout = max(1.0, min(REQUEST_TIMEOUT, deadline - time.monotonic()))
        try:
            resp = opener.open(req, timeout=timeout)
        except urllib.error.HTTPError as err:
            location = err.headers.get("Location") if 300 <= err.code < 400 else None
            if location:
                err.close()
                url = urljoin(url, location)
                continue
            resp = err  # an error status still has a body worth showing
        remove = ctx.cancel.on_cancel(resp.close)
        try:
            body, truncated = _read_body(resp, ctx, deadline)
        finally:
            remove()
            resp.close()
        return url, int(resp.getcode() or 0), resp.headers, body, truncated
    raise ToolError(f"too many redirects (more than {MAX_REDIRECTS}); last target {url}")


_META_CHARSET = re.compile(rb"""charset=["']?([A-Za-z0-9_.:-]+)""")


def _charset(headers: Message, body: bytes) -> str:
    """The body's charset: the header, else an HTML meta tag, else UTF-8."""
    charset = headers.get_content_charset()
    if not charset:
        match = _META_CHARSET.search(body[:4096])
        charset = match.group(1).decode("ascii") if match else "utf-8"
    try:
        codecs.lookup(charset)
    except LookupError:
        return "utf-8"
    return charset


def _decode_content(headers: Message, body: bytes) -> bytes:
    """Undo a gzip/deflate Content-Encoding (sent by some servers though we never ask).

    The output is capped like the download; a body that does not inflate is
    returned as it came.
    """
    coding = (headers.get("Content-Encoding") or "").strip().lower()
    if coding not in ("gzip", "x-gzip", "deflate") or not body:
        return body
    # wbits 47 = gzip or zlib header auto-detected; -15 = raw deflate (old servers).
    for wbits in (47, -15):
        try:
            return zlib.decompressobj(wbits).decompress(body, MAX_BYTES)
        except zlib.error:
            continue
    return body


def _web_fetch(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    url = args["url"].strip()
    try:
        final, status, headers, body, truncated = fetch(url, ctx)
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        raise ToolError(f"could not fetch {url}: {reason}") from err
    body = _decode_content(headers, body)
    ctype = (headers.get_content_type() or "").lower()
    declared = headers.get("Content-Type") is not None
    text_like = (not declared) or ctype.startswith(_TEXT_TYPES) or ctype.endswith(_TEXT_TYPES)
    head = f"URL: {final}\nStatus: {status} · {ctype or 'unknown type'} · {len(body)} bytes"
    if truncated:
        head += f" (download stopped at the {MAX_BYTES // (1024 * 1024)} MB cap)"
    if not text_like or b"\x00" in body[:4096]:
        return ToolResult(content=f"{head}\n\n(binary content not shown)", is_error=status >= 400)
    text = body.decode(_charset(headers, body), errors="replace")
    # html.parser and its entity tables load only when a page is fetched.
    from reasonix.tool.builtin._html import html_to_text, looks_like_html

    if ctype == "text/html" or ctype == "application/xhtml+xml" or looks_like_html(text):
        text = html_to_text(text, final)
    text = text.strip() or "(empty body)"
    return ToolResult(
        content=f"{head}\n\n{text}",
        is_error=status >= 400,
        metadata={"url": final, "status": status},
    )


TOOL = FunctionTool("web_fetch", DESCRIPTION, SCHEMA, _web_fetch, read_only=True)
register_builtin(TOOL)
