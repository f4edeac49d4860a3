"""Start-up weight: what a run must not load or build before it needs it (bench/task.py).

Structural checks only (which modules are imported, which objects exist),
never timings.
"""

from __future__ import annotations

import ssl
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, Turn

from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.provider.http import HTTPClient
from reasonix.provider.openai import OpenAIProvider
from reasonix.provider.types import Message, Request, Role

ROOT = Path(__file__).resolve().parent.parent


def test_registering_the_builtin_tools_loads_no_heavy_helper() -> None:
    code = (
        "import sys\n"
        "from reasonix.tool import builtin\n"
        "builtin.load_all()\n"
        "print(' '.join(sorted(m for m in sys.modules if m in WATCH)))\n"
    ).replace(
        "WATCH",
        repr(
            {
                "html.parser",
                "difflib",
                "uuid",
                "platform",
                "reasonix.tool.builtin._html",
                "reasonix.tool.builtin._gitignore",
                "reasonix.tool.builtin._grep_engine",
                "reasonix.tool.builtin._walk",
                "reasonix.permission.sandbox.blame",
            }
        ),
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == []


def test_an_http_endpoint_never_builds_a_tls_context() -> None:
    with FakeServer("openai", [Turn(text="hi")]) as srv:
        cfg = ProviderConfig(name="t", kind="openai", base_url=srv.url + "/v1", api_key="sk-test")
        prov = OpenAIProvider(cfg)
        req = Request(model="fake-model", messages=[Message(Role.USER, "hello")])
        list(prov.stream(req, Cancel()))
        assert isinstance(prov.client, HTTPClient)
        assert prov.client._ssl_context is None


def test_the_tls_context_is_made_once_on_demand() -> None:
    client = HTTPClient()
    assert client._ssl_context is None
    first = client._ssl
    assert client._ssl is first and client._ssl_context is first


def test_an_https_endpoint_builds_the_tls_context_in_the_background(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made_on: list[str] = []
    real = ssl.create_default_context

    def recording(*args: Any, **kwargs: Any) -> ssl.SSLContext:  # a spy on the stdlib call
        made_on.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", recording)
    cfg = ProviderConfig(name="t", kind="openai", base_url="https://api.invalid/v1", api_key="k")
    prov = OpenAIProvider(cfg)
    for thread in threading.enumerate():
        if thread.name == "reasonix-tls":
            thread.join()
    assert prov.client._ssl_context is not None
    assert made_on == ["reasonix-tls"]  # made once, and not by the thread that built it


def test_the_version_path_imports_no_typing() -> None:
    """``reasonix --version`` answers before ``typing`` (with ``re`` and ``enum``) loads:
    the boot modules (``__main__``, ``_codecache``, ``cli.main``) annotate with names the
    interpreter has already loaded. Other modules use ``from typing import TYPE_CHECKING``."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-S", "-E", "-X", "importtime", "-m", "reasonix", "--version"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    loaded = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    assert "reasonix.cli.main" in loaded  # the check saw the command's own modules
    assert not loaded & {"typing", "re", "enum", "dataclasses"}, sorted(loaded)
