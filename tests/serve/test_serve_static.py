"""The page's ES modules: each one shipped, served as JavaScript and reachable without a build.

The page is split into small modules beside ``app.js`` (the entry, a ``<script type="module">``)
that import each other by relative path. The server serves only the files directly in
``reasonix/serve/static/`` by exact name, so a module in a subfolder, a bare or remote
import (a CDN) or a module nobody loads would break the page or ship dead code; these
tests catch each before a browser does.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from serve_kit import Client, running, write_workspace

from reasonix.serve.server import static_files

STATIC = Path(__file__).resolve().parents[2] / "reasonix" / "serve" / "static"
ENTRY = "app.js"
MAX_LINES = 250
IMPORT = re.compile(r"""^\s*import\s+(?:[^"';]*?\s+from\s+)?["']([^"']+)["']""", re.M | re.S)


def modules() -> dict[str, str]:
    """Every module beside the entry: name -> source."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(STATIC.glob("*.js"))}


def imports(source: str) -> list[str]:
    return IMPORT.findall(source)


def test_the_page_is_split_into_modules() -> None:
    found = modules()
    assert ENTRY in found and len(found) >= 6, sorted(found)


@pytest.mark.parametrize("name", sorted(modules()))
def test_no_module_is_long(name: str) -> None:
    lines = modules()[name].count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines; split it by responsibility"


def test_imports_are_relative_and_name_shipped_files() -> None:
    shipped = static_files()
    for name, source in modules().items():
        for spec in imports(source):
            # "./x.js" only: no CDN, no bare name (there is no build step to resolve one),
            # no subfolder (the server serves the static folder's own files by exact name)
            assert re.fullmatch(r"\./[a-z][a-z0-9_-]*\.js", spec), (name, spec)
            target = spec[2:]
            assert target in shipped, (name, spec)
            assert shipped[target][1] == "text/javascript; charset=utf-8"


def test_every_module_is_loaded_from_the_entry_without_a_cycle() -> None:
    graph = {name: [s[2:] for s in imports(src)] for name, src in modules().items()}
    seen: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> None:
        assert name not in path, "import cycle: " + " -> ".join([*path, name])
        if name in seen:
            return
        path.append(name)
        for dep in graph[name]:
            visit(dep)
        path.pop()
        seen.add(name)

    visit(ENTRY)
    assert seen == set(graph), f"never imported: {sorted(set(graph) - seen)}"


def test_index_loads_the_entry_as_a_module_and_preloads_the_rest() -> None:
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    assert f'<script type="module" src="/static/{ENTRY}"></script>' in html
    preloaded = set(re.findall(r'<link rel="modulepreload" href="/static/([^"]+)">', html))
    # one round trip for all of them, even over a slow tunnel, instead of one per import level
    assert preloaded == set(modules()) - {ENTRY}


def test_every_module_is_served_as_javascript(tmp_path: Path) -> None:
    ws = write_workspace(tmp_path / "repo", "http://127.0.0.1:9")  # the model is never asked
    # token mode and no login: the page's files load before the login form can be shown
    with running(ws, auth_mode="token") as app:
        c = Client(app.port)
        for name, source in modules().items():
            status, body, resp = c.request("GET", f"/static/{name}")
            assert status == 200, name
            assert body == {"raw": source}, name
            assert resp.getheader("Content-Type") == "text/javascript; charset=utf-8", name
            assert resp.getheader("X-Content-Type-Options") == "nosniff"
            assert "script-src 'self'" in (resp.getheader("Content-Security-Policy") or "")
