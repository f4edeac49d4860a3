"""A first start of the .pyz with an empty home (issue 38 item 5, issue 39 item 3).

Real parts: the built archive run by this Python against the loopback fake. What
is checked is order and state, never time: the first model request leaves before
any unpacked copy exists (the copy is made at exit), a first start compiles none
of our modules (the archive carries their byte-code for the Python that built
it), the copy's ``__pycache__`` is written from that byte-code, and the cache
directory is the one ``reasonix.config.home.cache_str`` names (``~`` expanded).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from typing import Any

import pytest
from e2e_task_env import write_project
from fakes import FakeServer, Turn

# Counts the compile() calls for our modules (zipimport compiles a module's source
# when the archive has no byte-code it can use), then runs the archive as `python x.pyz`.
_DRIVER = r"""
import json, sys
out, pyz = sys.argv[1], sys.argv[2]
compiled = []
def watch(event, args):
    if event == "compile" and isinstance(args[1], str) and "reasonix/" in args[1]:
        compiled.append(args[1])
sys.addaudithook(watch)
sys.argv = [pyz, *sys.argv[3:]]
import atexit, runpy
atexit.register(lambda: open(out, "w").write(json.dumps(compiled)))
runpy.run_path(pyz, run_name="__main__")
"""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
        "REASONIX_HOME": str(tmp_path / "rx"),
        "REASONIX_TRUST_WORKSPACE": "1",  # the test wrote this workspace itself
        "FAKE_PROVIDER_KEY": "sk-fake",
        **extra,
    }


def _copies(cache: Path) -> list[Path]:
    """What ``<cache>/pyz`` holds: copies, half-made copies, extracted payloads."""
    folder = cache / "pyz"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _run(pyz: Path, tmp_path: Path, env: dict[str, str], states: list[list[str]]) -> list[str]:
    """One headless run against the fake; ``states`` gets, at each model request, the names
    in ``<cache>/pyz``. Returns the files of ours the run compiled."""
    ws = tmp_path / "repo"
    cache = Path(env.get("REASONIX_CACHE_HOME") or tmp_path / "rx" / "cache")
    out = tmp_path / "compiled.json"

    def look(_rec: Any) -> None:
        states.append([p.name for p in _copies(cache)])

    with FakeServer("openai", [Turn.text_only("ok")], responder=look) as srv:
        write_project(ws, srv.url)
        done = subprocess.run(
            [sys.executable, "-c", _DRIVER, str(out), str(pyz), "run", "--json", "-y", "hi"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["subtype"] == "success"
    compiled: list[str] = json.loads(out.read_text())
    return compiled


def _byte_code_for_this_python(pyz: Path) -> bool:
    """The archive's byte-code suits this Python (it carries byte-code: an assertion)."""
    with zipfile.ZipFile(pyz) as zf:
        names = set(zf.namelist())
        assert "reasonix/__init__.pyc" in names, "the archive carries no byte-code"
        return zf.read("reasonix/__init__.pyc")[:4] == MAGIC_NUMBER


@pytest.mark.e2e
def test_the_first_request_leaves_before_the_copy_is_made(pyz: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = _env(tmp_path, REASONIX_CACHE_HOME=str(cache))
    states: list[list[str]] = []
    _run(pyz, tmp_path, env, states)
    copy, payload = _copies(cache)  # made at exit, complete, with its byte-code in place
    # when the request arrived: only the payload the start imports from (one file of the
    # archive's), nothing unpacked, not even begun
    assert payload.name == copy.name + ".zip" and states == [[payload.name]]
    assert (copy / ".complete").is_file()
    assert (copy / "reasonix" / "cli" / "main.py").is_file()
    if _byte_code_for_this_python(pyz):
        tag = sys.implementation.cache_tag
        assert (copy / "reasonix" / "cli" / "__pycache__" / f"main.{tag}.pyc").is_file()
    states.clear()
    _run(pyz, tmp_path, env, states)  # the next start runs from the copy
    assert states == [[copy.name, payload.name]]


@pytest.mark.e2e
def test_a_first_start_compiles_none_of_our_modules(pyz: Path, tmp_path: Path) -> None:
    if not _byte_code_for_this_python(pyz):
        pytest.skip(f"the archive's byte-code is for another Python than {sys.version}")
    for extra in ({"REASONIX_CACHE_HOME": str(tmp_path / "c1")}, {"REASONIX_NO_UNPACK": "1"}):
        assert _run(pyz, tmp_path, _env(tmp_path, **extra), []) == [], extra
    # the copy's __pycache__ came from the archive: its start compiles nothing either
    assert _run(pyz, tmp_path, _env(tmp_path, REASONIX_CACHE_HOME=str(tmp_path / "c1")), []) == []


@pytest.mark.e2e
def test_no_unpack_writes_nothing_under_the_cache(pyz: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = _env(tmp_path, REASONIX_CACHE_HOME=str(cache), REASONIX_NO_UNPACK="1", TMPDIR=str(temp))
    _run(pyz, tmp_path, env, [])
    assert _copies(cache) == []
    assert list(temp.iterdir()) == []  # the payload was a temporary file, removed at exit


@pytest.mark.e2e
def test_the_cache_dir_is_the_config_one_with_a_tilde_expanded(pyz: Path, tmp_path: Path) -> None:
    """``REASONIX_CACHE_HOME=~/c`` is ``$HOME/c`` for the boot as for the rest of Reasonix
    (the boot once kept its own copy of the rule, without the ``~``)."""
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    env = _env(tmp_path, REASONIX_CACHE_HOME="~/c")
    for _ in range(2):
        out = subprocess.run([sys.executable, str(pyz), "config", "compact-ratio"], cwd=work,
                             env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
        assert out.returncode == 0 and out.stdout.startswith("0.80"), out.stderr[-2000:]
    assert len([p for p in _copies(tmp_path / "home" / "c") if p.is_dir()]) == 1
    assert not (work / "~").exists()


@pytest.mark.e2e
def test_version_compiles_nothing(pyz: Path, tmp_path: Path) -> None:
    """runpy takes the archive's ``__main__.pyc`` when it suits this Python."""
    if not _byte_code_for_this_python(pyz):
        pytest.skip(f"the archive's byte-code is for another Python than {sys.version}")
    watch = (
        "import sys\n"
        "def hook(e, a):\n"
        "    if e == 'compile':\n"
        "        sys.stderr.write(f'compiled {a[1]}\\n')\n"
        "sys.addaudithook(hook)\n"
        f"sys.argv = [{str(pyz)!r}, '--version']\n"
        f"import runpy; runpy.run_path({str(pyz)!r}, run_name='__main__')\n"
    )
    out = subprocess.run([sys.executable, "-c", watch], capture_output=True, text=True,
                         timeout=60)  # fmt: skip
    assert out.stdout.startswith("reasonix ")
    assert [line for line in out.stderr.splitlines() if "pyz" in line] == []


# Writes what Remote-SSH would install (`local_pyz()`) and where the package came from.
_WHERE = r"""
import json, sys
out, pyz = sys.argv[1], sys.argv[2]
sys.argv = [pyz, *sys.argv[3:]]
def report():
    import reasonix
    from reasonix.cli.remote_agent import local_pyz
    open(out, "w").write(json.dumps([str(local_pyz()), reasonix.__file__]))
import atexit, runpy
atexit.register(report)
runpy.run_path(pyz, run_name="__main__")
"""


@pytest.mark.e2e
def test_remote_installs_the_archive_also_when_running_from_its_copy(
    pyz: Path, tmp_path: Path
) -> None:
    """The modules come from the unpacked copy after the first start; the .pyz to install on
    a remote host is still the archive (it used to look for ".pyz" in the package's path)."""
    cache, out = tmp_path / "cache", tmp_path / "where.json"
    env = _env(tmp_path, REASONIX_CACHE_HOME=str(cache))
    for _ in range(2):  # the first start unpacks at exit; the second runs from the copy
        res = subprocess.run(
            [sys.executable, "-c", _WHERE, str(out), str(pyz), "usage", "--json"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
    installed, package = json.loads(out.read_text())
    assert str(cache) in package  # this start ran from the copy
    assert installed == str(pyz)
