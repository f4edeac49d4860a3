"""The .pyz's byte-code cache serves unchanged modules only, and never breaks an import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

_RUN = """
import sys
sys.path[:0] = [{lib!r}, {root!r}]
from reasonix._codecache import install
install({folder!r})
import demo.calc as calc
loader = type(calc.__spec__.loader).__name__
print(calc.answer(), loader, calc.__file__, calc.__spec__.parent, bool(calc.__doc__))
"""


def _project(tmp_path: Path) -> tuple[Path, Path]:
    lib = tmp_path / "lib"
    (lib / "demo").mkdir(parents=True)
    (lib / "demo" / "__init__.py").write_text('"""A package."""\n')
    (lib / "demo" / "calc.py").write_text('"""Adds."""\ndef answer():\n    return 41 + 1\n')
    folder = tmp_path / "cache"
    folder.mkdir()
    return lib, folder


def _run(lib: Path, folder: Path) -> list[str]:
    code = _RUN.format(lib=str(lib), root=str(ROOT), folder=str(folder))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=60, check=True)  # fmt: skip
    assert out.stderr == ""
    return out.stdout.split()


def test_a_second_run_is_served_from_the_cache_with_the_real_file_attributes(
    tmp_path: Path,
) -> None:
    lib, folder = _project(tmp_path)
    first = _run(lib, folder)
    assert first[:2] == ["42", "SourceFileLoader"]
    assert [p.name for p in folder.iterdir() if p.name.startswith("codecache-")]
    second = _run(lib, folder)
    assert second[:2] == ["42", "_Loader"]
    # the module looks exactly as if imported from its file
    assert second[2:] == first[2:] == [str(lib / "demo" / "calc.py"), "demo", "True"]


def test_an_edited_module_is_imported_afresh(tmp_path: Path) -> None:
    lib, folder = _project(tmp_path)
    _run(lib, folder)
    assert _run(lib, folder)[:2] == ["42", "_Loader"]
    (lib / "demo" / "calc.py").write_text('"""Adds."""\ndef answer():\n    return 40 + 3\n')
    assert _run(lib, folder)[:2] == ["43", "SourceFileLoader"]
    assert _run(lib, folder)[:2] == ["43", "_Loader"]  # and the new code is kept


def test_a_damaged_cache_file_only_means_normal_imports(tmp_path: Path) -> None:
    lib, folder = _project(tmp_path)
    _run(lib, folder)
    (cache,) = [p for p in folder.iterdir() if p.name.startswith("codecache-")]
    raw = cache.read_bytes()
    for damaged in (b"", raw[:40], raw[:-500], raw[:30] + b"\xff" * 200 + raw[230:]):
        cache.write_bytes(damaged)
        assert _run(lib, folder)[0] == "42"


def test_another_search_path_uses_a_file_of_its_own(tmp_path: Path) -> None:
    lib, folder = _project(tmp_path)
    _run(lib, folder)
    other = tmp_path / "other"
    (other / "demo").mkdir(parents=True)
    (other / "demo" / "__init__.py").write_text("")
    (other / "demo" / "calc.py").write_text("def answer():\n    return 7\n")
    assert _run(other, folder)[:2] == ["7", "SourceFileLoader"]  # not the other lib's code
    assert len([p for p in folder.iterdir() if p.name.startswith("codecache-")]) == 2


def test_an_optimised_interpreter_uses_a_file_of_its_own(tmp_path: Path) -> None:
    """-O strips asserts: code cached without it must not run under it, nor the reverse."""
    lib, folder = _project(tmp_path)
    _run(lib, folder)
    code = _RUN.format(lib=str(lib), root=str(ROOT), folder=str(folder))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True,
                         env=env, timeout=60, check=True).stdout.split()  # fmt: skip
    assert out[:2] == ["42", "SourceFileLoader"]
    assert len([p for p in folder.iterdir() if p.name.startswith("codecache-")]) == 2


def test_damaged_stored_code_is_not_run(tmp_path: Path) -> None:
    """A changed byte inside a module's stored code fails its checksum: the source is used."""
    lib, folder = _project(tmp_path)
    _run(lib, folder)
    (cache,) = [p for p in folder.iterdir() if p.name.startswith("codecache-")]
    raw = cache.read_bytes()
    assert raw.count(b"Adds.") == 1  # calc's docstring, inside its stored code only
    cache.write_bytes(raw.replace(b"Adds.", b"Adda."))
    assert _run(lib, folder)[:2] == ["42", "SourceFileLoader"]
    assert _run(lib, folder)[:2] == ["42", "_Loader"]  # and the damaged code is replaced


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open descriptors")
def test_a_file_that_is_not_used_is_not_left_open(tmp_path: Path) -> None:
    from reasonix import _codecache

    key = _codecache._key()
    path = tmp_path / _codecache._name(key)
    before = len(os.listdir("/proc/self/fd"))
    for content in (b"", b"junk" * 100, _codecache._FORMAT + (10**9).to_bytes(8, "little")):
        path.write_bytes(content)
        assert _codecache._open(str(path), key)[0] == {}
    assert len(os.listdir("/proc/self/fd")) == before
