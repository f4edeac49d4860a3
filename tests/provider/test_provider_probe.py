"""The start-up window probe against fakes that answer like llama.cpp, Ollama, LM Studio, vLLM.

The probe must read each server's own field, never consume a scripted model
answer, never raise, and give up within its deadline on a server that does
not answer at all.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from fakes import FakeServer, Turn, dialects

from reasonix.config.model import ProviderConfig
from reasonix.provider.probe import probe_window, server_root, should_probe


def _cfg(url: str, kind: str = "openai", **kw: object) -> ProviderConfig:
    cfg = ProviderConfig(name="local", kind=kind, base_url=url, models=["m"])
    for key, value in kw.items():
        setattr(cfg, key, value)
    return cfg


def test_llama_cpp_props_name_the_served_window() -> None:
    meta = {"GET /props": dialects.llama_cpp_props(8192)}
    with FakeServer("openai", [Turn.text_only("unused")], meta=meta) as srv:
        found = probe_window(_cfg(srv.url + "/v1"), "local", headers={"Authorization": "Bearer k"})
        assert srv.remaining == 1 and srv.requests == []  # no model answer was consumed
        assert srv.meta_requests[0].header("authorization") == "Bearer k"
    assert found is not None and found.tokens == 8192 and found.server == "llama.cpp"
    assert found.source == "llama.cpp GET /props" and "-c" in found.hint


def test_llama_cpp_behind_the_anthropic_kind_is_found_at_the_same_root() -> None:
    with FakeServer("anthropic", meta={"GET /props": dialects.llama_cpp_props(4096)}) as srv:
        found = probe_window(_cfg(srv.url, kind="anthropic"), "local")
    assert found is not None and found.tokens == 4096


def test_ollama_running_num_ctx_wins_over_the_modelfile() -> None:
    meta = {
        "POST /api/show": dialects.ollama_show(32768, num_ctx=8192),
        "GET /api/ps": dialects.ollama_ps("qwen2.5-coder:7b", 4096),
    }
    with FakeServer("openai", meta=meta) as srv:
        found = probe_window(_cfg(srv.url + "/v1"), "qwen2.5-coder:7b")
        show = next(r for r in srv.meta_requests if r.path == "/api/show")
    assert show.json == {"model": "qwen2.5-coder:7b"}
    assert found is not None and found.server == "ollama"
    assert (found.tokens, found.trained, found.source) == (4096, 32768, "Ollama GET /api/ps")
    assert "silently" in found.hint and "OLLAMA_CONTEXT_LENGTH" in found.hint


def test_ollama_modelfile_num_ctx_and_a_model_not_loaded_yet() -> None:
    show = {"POST /api/show": dialects.ollama_show(32768, num_ctx=8192)}
    with FakeServer("openai", meta=show) as srv:
        found = probe_window(_cfg(srv.url + "/v1"), "qwen")
    assert found is not None and (found.tokens, found.source) == (8192, "Ollama POST /api/show")
    meta = {"POST /api/show": dialects.ollama_show(131072), "GET /api/ps": {"models": []}}
    with FakeServer("openai", meta=meta) as srv:
        found = probe_window(_cfg(srv.url + "/v1"), "qwen")
        assert found is not None and (found.tokens, found.trained) == (0, 131072)
        srv.meta["GET /api/ps"] = dialects.ollama_ps("qwen:latest", 16384)  # loaded now
        again = probe_window(_cfg(srv.url + "/v1"), "qwen", only_ollama_ps=True)
    assert again is not None and again.tokens == 16384


def test_lmstudio_loaded_context_length() -> None:
    info = dialects.lmstudio_model("qwen/qwen3-8b", loaded=16384, trained=40960)
    with FakeServer("openai", meta={"GET /api/v0/models/qwen%2Fqwen3-8b": info}) as srv:
        found = probe_window(_cfg(srv.url + "/v1"), "qwen/qwen3-8b")
    assert found is not None and (found.tokens, found.trained) == (16384, 40960)
    assert found.server == "lmstudio"


@pytest.mark.parametrize(
    ("fields", "tokens", "trained"),
    [
        ({"max_model_len": 32768}, 32768, 0),  # vLLM, SGLang
        ({"context_length": 65536}, 65536, 0),  # OpenRouter-style listings
        ({"meta": {"n_ctx_train": 131072}}, 0, 131072),  # llama.cpp: the trained window only
    ],
)
def test_openai_compatible_models_metadata(
    fields: dict[str, object], tokens: int, trained: int
) -> None:
    with FakeServer(
        "openai", meta={"GET /v1/models": dialects.openai_models("m", **fields)}
    ) as srv:
        found = probe_window(_cfg(srv.url + "/v1"), "m")
    assert found is not None and (found.tokens, found.trained) == (tokens, trained)


def test_a_server_without_metadata_says_nothing() -> None:
    with FakeServer("openai", [Turn.text_only("unused")]) as srv:
        assert probe_window(_cfg(srv.url + "/v1"), "m") is None
        assert srv.remaining == 1 and srv.requests == []
        assert len(srv.meta_requests) == 4  # props, LM Studio, Ollama show, /models


def test_nothing_listening_gives_up_at_once() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    started = time.monotonic()
    assert probe_window(_cfg(f"http://127.0.0.1:{port}/v1"), "m", timeout=60.0) is None
    # a refused connection ends the probe: it never waits out its (long) deadline
    assert time.monotonic() - started < 30.0


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A server that accepts connections and never answers."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.05)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    for c in held:
        c.close()
    srv.close()


def test_a_silent_server_costs_at_most_the_deadline(silent_port: int) -> None:
    started = time.monotonic()
    assert probe_window(_cfg(f"http://127.0.0.1:{silent_port}/v1"), "m", timeout=0.4) is None
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize(
    ("url", "forced", "asked"),
    [
        ("http://127.0.0.1:8080/v1", None, True),
        ("http://localhost:11434/v1", None, True),
        ("http://[::1]:8000/v1", None, True),
        ("http://192.168.1.20:1234/v1", None, True),
        ("http://gpu-box:8000/v1", None, True),
        ("http://studio.local:1234/v1", None, True),
        ("https://api.deepseek.com", None, False),
        ("https://openrouter.ai/api/v1", None, False),
        ("https://8.8.8.8/v1", None, False),
        ("https://vllm.example.com/v1", True, True),
        ("http://127.0.0.1:8080/v1", False, False),
    ],
)
def test_who_is_asked(url: str, forced: bool | None, asked: bool) -> None:
    assert should_probe(_cfg(url, probe_window=forced)) is asked


def test_server_root_strips_the_api_version_path() -> None:
    assert server_root("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080"
    assert server_root("http://h:1/proxy/v1/chat/completions") == "http://h:1/proxy"
    assert server_root("http://h:11434") == "http://h:11434"


def test_the_window_waits_as_long_as_the_probe_may_take() -> None:
    from reasonix.agent import window
    from reasonix.provider import probe

    assert window.PROBE_TIMEOUT == probe.PROBE_TIMEOUT


def test_the_four_first_asks_are_in_flight_together() -> None:
    """A server that answers only once all four asks have arrived: asked one after
    another, the probe would wait for the first answer until its deadline."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    # Longer than the probe's deadline: asked one after another, the probe gives up on
    # its first ask (no answer comes) long before this barrier would break.
    together = threading.Barrier(4, timeout=60.0)
    paths: list[str] = []

    def serve(conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            path = head.split(b" ", 2)[1].decode()
            paths.append(path)
            try:
                together.wait()
            except threading.BrokenBarrierError:
                return  # not all four came: close without an answer
            found = path == "/v1/models"
            body = b'{"data": [{"id": "m", "max_model_len": 12288}]}' if found else b"{}"
            status = b"200 OK" if found else b"404 Not Found"
            head = b"HTTP/1.1 %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
            conn.sendall(head % (status, len(body)) + body)

    def accept() -> None:
        for _ in range(4):
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        port = srv.getsockname()[1]
        found = probe_window(_cfg(f"http://127.0.0.1:{port}/v1"), "m", timeout=20.0)
    finally:
        together.abort()  # a probe that asked fewer than four leaves no server thread behind
        srv.close()
    assert sorted(paths) == sorted(["/props", "/api/v0/models/m", "/api/show", "/v1/models"])
    # an answer exists only because all four asks were waiting at the barrier together
    assert found is not None and (found.tokens, found.source) == (12288, "GET /models")
