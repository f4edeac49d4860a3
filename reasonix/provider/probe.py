"""Ask a model server which context window it really serves (start-up probe).

A configured ``context_window`` often comes from the model card, while a
local server was started with a smaller one (``llama-server -c 8192``,
Ollama's ``num_ctx``, LM Studio's load setting). Servers that say so:

- llama.cpp: ``GET <root>/props`` -> ``default_generation_settings.n_ctx``;
- LM Studio: ``GET <root>/api/v0/models/<model>`` -> ``loaded_context_length``
  (``max_context_length`` is the trained maximum);
- Ollama: ``POST <root>/api/show`` -> ``num_ctx`` in ``parameters`` and the
  trained ``model_info.*.context_length``; ``GET <root>/api/ps`` -> the
  running ``context_length`` once the model is loaded;
- OpenAI-compatible: ``GET <base>/models`` -> ``max_model_len`` (vLLM,
  SGLang), ``context_length``, ``context_window``; ``meta.n_ctx_train``
  (llama.cpp) is the trained maximum.

:func:`probe_window` tries them in that order within one short deadline and
returns what it found, or None; it never raises (an absent endpoint, a
refused connection, garbage JSON are all "nothing found"). ``<root>`` is the
server origin plus any path before ``/v1``. :func:`should_probe` decides who
is asked at all: servers on this machine or the local network, unless the
provider's ``probe_window`` says otherwise (see docs/PROVIDERS.md §8).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit, urlunsplit

from reasonix.lazy import dataclass
from reasonix.provider.http import USER_AGENT

if TYPE_CHECKING:
    import urllib.request
    from typing import Any

__all__ = [
    "PROBE_TIMEOUT",
    "ServedWindow",
    "probe_window",
    "server_root",
    "should_probe",
    "target_url",
]

PROBE_TIMEOUT = 1.5  # seconds for the whole probe; a local server answers in milliseconds
_BODY_LIMIT = 1 << 20


@dataclass(frozen=True)
class ServedWindow:
    """What a server said about its context window."""

    tokens: int  # the window requests get now; 0 = not known (e.g. Ollama model not loaded)
    source: str  # e.g. "llama.cpp GET /props"
    server: str  # "llama.cpp" | "lmstudio" | "ollama" | "openai-compatible"
    trained: int = 0  # the model's own maximum, where the server names it
    hint: str = ""  # what to change on the server to serve a larger window


def server_root(url: str) -> str:
    """The server origin plus any path before ``/v1`` (``http://h:8080/v1`` -> ``http://h:8080``)."""
    parts = urlsplit(url)
    path = parts.path
    cut = re.search(r"/v\d+(?:/|$)", path)
    path = path[: cut.start()] if cut else ""
    return urlunsplit((parts.scheme, parts.netloc, path.rstrip("/"), "", ""))


def _models_url(cfg: Any) -> str:
    base = str(getattr(cfg, "base_url", "") or "")
    if base:
        base = base.rstrip("/")
        kind = str(getattr(cfg, "kind", "openai"))
        if kind == "anthropic" and not re.search(r"/v\d+$", base):
            base += "/v1"
        return base + "/models"
    target = str(getattr(cfg, "request_url", "") or getattr(cfg, "chat_url", "") or "")
    head = re.sub(r"/(?:chat/completions|messages|responses)/?$", "", target.split("?", 1)[0])
    return head.rstrip("/") + "/models" if head else ""


def target_url(cfg: Any) -> str:
    """The URL requests go to (enough to find the server)."""
    for key in ("request_url", "chat_url", "base_url"):
        value = str(getattr(cfg, key, "") or "")
        if value:
            return value
    return ""


def should_probe(cfg: Any) -> bool:
    """True for servers on this machine or the local network, or when configured so.

    ``probe_window = true`` asks any server, ``false`` none; unset (None)
    asks only loopback, private and link-local addresses, ``localhost``,
    ``*.local`` / ``*.lan`` names and single-label host names — where local
    model servers live. Cloud APIs are never asked unprompted.
    """
    forced = getattr(cfg, "probe_window", None)
    if isinstance(forced, bool):
        return forced
    import ipaddress  # only here: start-up imports stay light

    host = (urlsplit(target_url(cfg)).hostname or "").lower()
    if not host:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local", ".lan")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host  # "gpu-box": a machine on this network
    return ip.is_loopback or ip.is_private or ip.is_link_local


class _Client:
    """Small JSON GET/POST with one deadline for the whole probe.

    The environment's proxies apply as for requests (``NO_PROXY`` spares
    loopback); without one, the asks :meth:`sent_ahead` all go out at once,
    each on a connection of its own (:mod:`reasonix.provider.h1`), and their answers are
    read in the probe's order: four asks of a local server then take about
    as long as one. Any other ask shares one kept-alive connection.
    """

    def __init__(self, headers: Mapping[str, str], timeout: float) -> None:
        self.headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **headers}
        self.deadline = time.monotonic() + timeout
        self.down = False  # the server refused the connection: asking more is pointless
        self._opener: urllib.request.OpenerDirector | None = None
        self._conns: dict[tuple[str, str], Any] = {}
        self._ahead: dict[tuple[str, bytes | None], Any] = {}  # sent, answer not read yet

    def close(self) -> None:
        """Close the kept-alive connections and those of answers never read."""
        for conn in [*self._conns.values(), *self._ahead.values()]:
            conn.close()
        self._conns.clear()
        self._ahead.clear()

    def send_ahead(self, asks: list[tuple[str, Any]]) -> None:
        """Send these (url, JSON body or None) asks now, each on a connection of its own;
        :meth:`json` of the same url and body then only reads the answer. Asks that go
        through a proxy, or cannot be sent, are left to :meth:`json` as usual."""
        for url, body in asks:
            data = None if body is None else json.dumps(body).encode()
            left = self.deadline - time.monotonic()
            parts = urlsplit(url)
            if self.down or left <= 0.01 or parts.scheme not in ("http", "https"):
                return
            if (url, data) in self._ahead or _proxied(parts.scheme, parts.hostname or ""):
                continue
            conn = None
            try:
                conn = self._connect(parts, left)
                self._send(conn, parts, data)
            except (OSError, ValueError) as err:
                if conn is not None:
                    conn.close()
                if isinstance(err, ConnectionRefusedError):
                    self.down = True
                continue
            self._ahead[(url, data)] = conn

    def json(self, url: str, body: Any = None) -> Any:
        left = self.deadline - time.monotonic()
        if self.down or left <= 0.01 or not url.startswith(("http://", "https://")):
            return None
        data = None if body is None else json.dumps(body).encode()
        try:
            parts = urlsplit(url)
            sent = self._ahead.pop((url, data), None)
            if sent is not None:
                raw = self._answer(sent, left, keep=False)
            elif _proxied(parts.scheme, parts.hostname or ""):
                raw = self._via_urllib(url, data, self._headers(data), left)
            else:
                raw = self._direct(parts, data, left)
        except (OSError, ValueError) as err:  # urllib's URLError is an OSError
            reason = getattr(err, "reason", err)
            if isinstance(reason, ConnectionRefusedError):
                self.down = True
            return None
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def _headers(self, data: bytes | None) -> dict[str, str]:
        headers = dict(self.headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        return headers

    def _via_urllib(
        self, url: str, data: bytes | None, headers: dict[str, str], left: float
    ) -> bytes | None:
        import urllib.error
        import urllib.request

        if self._opener is None:
            self._opener = urllib.request.build_opener()
        req = urllib.request.Request(url, data=data, headers=headers)
        try:
            with self._opener.open(req, timeout=left) as resp:
                raw: bytes = resp.read(_BODY_LIMIT)
                return raw
        except urllib.error.HTTPError as err:
            err.close()
            return None

    def _connect(self, parts: Any, left: float) -> _Link:
        """A new connection to ``parts``' server, connected within ``left``."""
        return _Link(parts, left)

    def _send(self, conn: _Link, parts: Any, data: bytes | None) -> None:
        from reasonix.provider import h1

        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            sock = conn.socket()
            conn.method = "POST" if data is not None else "GET"
            h1.send_request(sock, conn.method, path, self._headers(data), data,
                            host=conn.host, keep_alive=True)  # fmt: skip
        except BaseException:
            conn.close()  # a half-spoken exchange: the next ask opens a fresh connection
            raise

    def _answer(self, conn: _Link, left: float, *, keep: bool) -> bytes | None:
        """The body of the answer on ``conn`` (None unless 2xx); closes it unless ``keep``."""
        from reasonix.provider import h1

        try:
            sock = conn.socket()
            sock.settimeout(left)
            resp = h1.Response(sock, conn.method)
            raw: bytes = resp.read(_BODY_LIMIT + 1)
        except BaseException:
            conn.close()
            raise
        if keep and len(raw) <= _BODY_LIMIT and resp.detach() is not None:
            pass  # the socket stays with ``conn`` for the next ask
        else:
            conn.close()
        return raw[:_BODY_LIMIT] if 200 <= resp.status < 300 else None  # no redirect is followed

    def _direct(self, parts: Any, data: bytes | None, left: float) -> bytes | None:
        key = (parts.scheme, parts.netloc)
        conn = self._conns.get(key)
        if conn is None or conn.closed:
            conn = self._conns[key] = self._connect(parts, left)
        self._send(conn, parts, data)
        return self._answer(conn, left, keep=True)


class _Link:
    """One connection of the probe: made on construction, kept alive between asks."""

    def __init__(self, parts: Any, left: float) -> None:
        import socket

        from reasonix.provider import h1
        from reasonix.provider.sockets import wire_host

        host, https = parts.hostname or "", parts.scheme == "https"
        self.host = h1.host_header(host, parts.port, parts.scheme)
        self.method = "GET"
        port = parts.port or (443 if https else 80)
        address = (wire_host(host), port)  # bytes for an ASCII name: no IDNA codec
        sock = socket.create_connection(address, timeout=left)  # type: ignore[arg-type]
        if https:
            import ssl

            try:
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
            except BaseException:
                sock.close()
                raise
        self._sock: Any = sock

    @property
    def closed(self) -> bool:
        return self._sock is None

    def socket(self) -> Any:
        if self._sock is None:
            raise ConnectionResetError("the probe's connection is closed")
        return self._sock

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()


def _proxied(scheme: str, host: str) -> bool:
    """True when the environment routes ``scheme://host`` through a proxy (as urllib would)."""
    from reasonix.provider import h1

    if h1.direct_ok(scheme):  # no proxy variable at all: urllib would find none either
        return False
    import urllib.request

    proxies = urllib.request.getproxies()
    return scheme in proxies and not urllib.request.proxy_bypass(host)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _llama_cpp(client: _Client, root: str) -> ServedWindow | None:
    props = client.json(root + "/props")
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    n_ctx = _int(settings.get("n_ctx")) if isinstance(settings, dict) else 0
    n_ctx = n_ctx or _int(props.get("n_ctx"))
    if not n_ctx:
        return None
    hint = "start llama-server with a larger -c (--ctx-size); with -np N slots each gets 1/N"
    return ServedWindow(n_ctx, "llama.cpp GET /props", "llama.cpp", hint=hint)


def _lmstudio_url(root: str, model: str) -> str:
    return f"{root}/api/v0/models/{quote(model, safe='')}"


def _lmstudio(client: _Client, root: str, model: str) -> ServedWindow | None:
    if not model:
        return None
    info = client.json(_lmstudio_url(root, model))
    if not isinstance(info, dict) or "max_context_length" not in info:
        return None
    loaded = _int(info.get("loaded_context_length"))
    trained = _int(info.get("max_context_length"))
    hint = "load the model with a larger context length (LM Studio model settings, lms load -c)"
    source = "LM Studio GET /api/v0/models"
    return ServedWindow(loaded, source, "lmstudio", trained=trained, hint=hint)


def _same_model(name: str, wanted: str) -> bool:
    def bare(s: str) -> str:
        return s[: -len(":latest")] if s.endswith(":latest") else s

    return bool(name) and bare(name) == bare(wanted)


def _ollama(client: _Client, root: str, model: str) -> ServedWindow | None:
    if not model:
        return None
    show = client.json(root + "/api/show", {"model": model})
    if not isinstance(show, dict) or "model_info" not in show:
        return None
    info = show.get("model_info")
    trained = 0
    if isinstance(info, dict):
        trained = max(
            (_int(v) for k, v in info.items() if k.endswith(".context_length")), default=0
        )
    params = show.get("parameters")
    m = re.search(r"^\s*num_ctx\s+(\d+)", params, re.MULTILINE) if isinstance(params, str) else None
    served = int(m.group(1)) if m else 0
    source = "Ollama POST /api/show"
    ps = client.json(root + "/api/ps")
    models = ps.get("models") if isinstance(ps, dict) else None
    for entry in models if isinstance(models, list) else []:
        if not isinstance(entry, dict):
            continue
        names = (str(entry.get("name", "")), str(entry.get("model", "")))
        running = _int(entry.get("context_length"))
        if running and any(_same_model(n, model) for n in names):
            served, source = running, "Ollama GET /api/ps"
            break
    hint = (
        "Ollama cuts longer prompts silently; serve a larger window with "
        "OLLAMA_CONTEXT_LENGTH=<tokens> ollama serve, or PARAMETER num_ctx in a Modelfile"
    )
    return ServedWindow(served, source, "ollama", trained=trained, hint=hint)


def _openai_models(client: _Client, url: str, model: str) -> ServedWindow | None:
    listing = client.json(url) if url else None
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    chosen = next((e for e in entries if model and e.get("id") == model), None)
    if chosen is None and len(entries) == 1:
        chosen = entries[0]  # a server that serves one model answers for any name
    if chosen is None:
        return None
    served = _int(chosen.get("max_model_len")) or _int(chosen.get("context_length"))
    served = served or _int(chosen.get("context_window"))
    meta = chosen.get("meta")
    trained = _int(meta.get("n_ctx_train")) if isinstance(meta, dict) else 0
    if not served and not trained:
        return None
    return ServedWindow(served, "GET /models", "openai-compatible", trained=trained)


def probe_window(
    cfg: Any,
    model: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = PROBE_TIMEOUT,
    only_ollama_ps: bool = False,
) -> ServedWindow | None:
    """Ask the server behind ``cfg`` for its window; None when nothing says.

    ``cfg`` is read structurally (``kind``, ``base_url``, ``request_url``,
    ``chat_url``); ``headers`` are sent along (the provider's auth). Never
    raises; spends at most ``timeout`` seconds. ``only_ollama_ps`` re-asks
    Ollama alone (after the first answer has loaded the model).
    """
    try:
        return _probe(cfg, model, headers or {}, timeout, only_ollama_ps)
    except Exception:  # noqa: BLE001 - a probe is advice; it must never fail a run
        return None


def _probe(
    cfg: Any, model: str, headers: Mapping[str, str], timeout: float, only_ollama: bool
) -> ServedWindow | None:
    target = target_url(cfg)
    if not target:
        return None
    root = server_root(target)
    client = _Client(headers, timeout)
    try:
        return _ask_all(client, cfg, root, model, only_ollama)
    finally:
        client.close()


def _ask_all(
    client: _Client, cfg: Any, root: str, model: str, only_ollama: bool
) -> ServedWindow | None:
    if only_ollama:
        return _ollama(client, root, model)
    partial: ServedWindow | None = None
    # Every first ask goes out now: a server that answers none of them (or only the
    # last) is then done in about one round trip instead of four.
    first: list[tuple[str, Any]] = [(root + "/props", None)]
    if model:
        first += [(_lmstudio_url(root, model), None), (root + "/api/show", {"model": model})]
    if _models_url(cfg):
        first.append((_models_url(cfg), None))
    client.send_ahead(first)
    asks: list[Callable[[], ServedWindow | None]] = [
        lambda: _llama_cpp(client, root),
        lambda: _lmstudio(client, root, model),
        lambda: _ollama(client, root, model),
        lambda: _openai_models(client, _models_url(cfg), model),
    ]
    for ask in asks:
        found = ask()
        if found is not None and found.tokens:
            return found
        partial = partial or found  # a server that knows itself but not its window yet
        if client.down or partial is not None:
            break
    return partial
