"""reasonix.idle: what the wait for a model's answer imports, and only then.

The queue itself against throwaway modules; then a real run against a fake
model that takes a moment before it answers: by the time the answer is there,
the likely tools' modules are loaded, bash's among them although bash is never
called, and none of them was loaded before the request left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e.e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn

from reasonix import idle

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A throwaway package of three modules, the second broken; its name."""
    pkg = tmp_path / "idlepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "one.py").write_text("X = 1\n")
    (pkg / "broken.py").write_text("raise RuntimeError('not importable')\n")
    (pkg / "three.py").write_text("X = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(idle, "_todo", [])
    yield "idlepkg"
    for name in [m for m in sys.modules if m.startswith("idlepkg")]:
        del sys.modules[name]


def test_the_queue_is_imported_in_order_until_the_answer_is_there(package: str) -> None:
    idle.offer([f"{package}.one", f"{package}.broken", f"{package}.three", f"{package}.one"])
    assert idle._todo == [f"{package}.one", f"{package}.broken", f"{package}.three"]
    checks: list[int] = []

    def ready() -> bool:  # the answer arrives after two looks
        checks.append(1)
        return len(checks) > 2

    idle.run_until(ready)
    assert f"{package}.one" in sys.modules
    assert f"{package}.broken" not in sys.modules  # its real first use will say why
    assert f"{package}.three" not in sys.modules  # the answer came first
    idle.run_until(lambda: False)
    assert f"{package}.three" in sys.modules and idle._todo == []


def test_only_the_main_thread_imports_while_it_waits(package: str) -> None:
    idle.offer([f"{package}.one"])
    worker = threading.Thread(target=idle.run_until, args=(lambda: False,))
    worker.start()
    worker.join()
    assert f"{package}.one" not in sys.modules and idle._todo == [f"{package}.one"]


_DRIVER = r"""
import json, sys
out, seen = sys.argv[1], []
def watch(event, args):
    head = bytes(args[1][:200]) if event in ("http.client.send", "reasonix.h1.send") else b""
    if head.startswith(b"POST ") and b"/chat/completions" in head.split(b"\r\n")[0]:
        seen.append(sorted(m for m in sys.modules if m.startswith("reasonix.")))
        with open(out, "w") as fh:
            json.dump(seen, fh)
sys.addaudithook(watch)
sys.argv = ["reasonix", *sys.argv[2:]]
import runpy
runpy.run_module("reasonix", run_name="__main__")
"""


def test_the_wait_for_the_first_answer_loads_the_likely_tools(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    (ws / "calc.py").write_text("x = 1\n")
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')]),
        Turn.text_only("ok"),
    ]
    script[0].think = 0.5  # the model takes half a second before its first byte
    out = tmp_path / "modules.json"
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        done = subprocess.run(
            [sys.executable, "-c", _DRIVER, str(out), "run", "--json", "-y", "read calc.py"],
            cwd=ws, env=clean_env(tmp_path), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, second = (set(s) for s in json.loads(out.read_text()))
    warm = {
        "reasonix.tool.builtin.read_file",
        "reasonix.tool.builtin.edit_file",
        "reasonix.tool.builtin.bash",
        "reasonix.permission.bash",
        "reasonix.tool.builtin.grep",
    }
    assert not first & warm  # the request left before any of them was loaded
    assert warm <= second  # bash is never called, yet it was loaded while the model thought


def test_every_module_the_runtime_offers_exists() -> None:
    """In a fresh process (where no tool module is loaded yet, as at a run's start)."""
    code = (
        "import json; from reasonix.boot.parts import warm_modules; "
        "from reasonix.tool import builtin; builtin.load_catalog(); "
        "from reasonix.tool import Registry; "
        "print(json.dumps([warm_modules(Registry.from_builtins(), checkpoints=True), "
        "warm_modules(Registry.from_builtins(['read_file']))]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names, only_read = json.loads(done.stdout)
    assert "reasonix.tool.builtin.read_file" in names and "reasonix.permission.bash" in names
    # the first snapshot's module right after the first tool's: it is made beside that tool
    assert (
        names.index("reasonix.agent.snaptree") == names.index("reasonix.tool.builtin.read_file") + 1
    )
    # its git runs through subprocess, which is not loaded before the first request
    assert names.index("subprocess") == names.index("reasonix.agent.snaplist") + 1
    import importlib.util

    assert [n for n in names if importlib.util.find_spec(n) is None] == []
    assert only_read == [  # only what is enabled
        "reasonix.tool.paths",
        "reasonix.tool.builtin._regular",
        "reasonix.tool.builtin._files",
        "reasonix.tool.builtin.read_file",
    ]
