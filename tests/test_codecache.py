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
        assert _codecache._open(str(path), key)[0] == ({}, {})
    assert len(os.listdir("/proc/self/fd")) == before


# The cache must never change which file Python imports: each case below makes the normal
# search find another file than the stored one, without touching the stored file itself.

_SHADOW = """
import sys
sys.path[:0] = [{early!r}, {lib!r}, {root!r}]
from reasonix._codecache import install
install({folder!r})
import demo.calc as calc
print(calc.answer(), type(calc.__spec__.loader).__name__, calc.__file__)
"""


def _shadow_run(early: Path, lib: Path, folder: Path, *flags: str) -> list[str]:
    code = _SHADOW.format(early=str(early), lib=str(lib), root=str(ROOT), folder=str(folder))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60, check=True)  # fmt: skip
    return out.stdout.split()


def test_a_package_that_appears_earlier_on_the_path_is_imported_not_the_stored_one(
    tmp_path: Path,
) -> None:
    lib, folder = _project(tmp_path)
    early = tmp_path / "early"  # a PYTHONPATH folder (or the current directory) ahead of lib
    early.mkdir()
    _shadow_run(early, lib, folder)
    assert _shadow_run(early, lib, folder)[:2] == ["42", "_Loader"]  # served from the cache
    (early / "demo").mkdir()
    (early / "demo" / "__init__.py").write_text("")
    (early / "demo" / "calc.py").write_text("def answer():\n    return 7\n")
    mine = str(early / "demo" / "calc.py")
    assert _shadow_run(early, lib, folder) == ["7", "SourceFileLoader", mine]
    assert _shadow_run(early, lib, folder) == ["7", "_Loader", mine]  # and that one is kept


def test_a_module_that_appears_earlier_on_the_path_shadows_a_stored_standard_one(
    tmp_path: Path,
) -> None:
    """``colorsys.py`` in a folder ahead of the standard library: Python imports it."""
    lib, folder = _project(tmp_path)
    early = tmp_path / "early"
    early.mkdir()
    calc = "import colorsys as c\ndef answer():\n    return getattr(c, 'X', 42)\n"
    (lib / "demo" / "calc.py").write_text(calc)
    _shadow_run(early, lib, folder)
    assert _shadow_run(early, lib, folder)[:2] == ["42", "_Loader"]
    (early / "colorsys.py").write_text("X = 5\n")
    assert _shadow_run(early, lib, folder)[0] == "5"


def test_a_package_beside_a_stored_module_of_its_name_takes_its_place(tmp_path: Path) -> None:
    """In one folder a package ``calc/`` wins over ``calc.py``; the stored calc.py is
    unchanged, so only the folder's own change can tell."""
    lib, folder = _project(tmp_path)
    early = tmp_path / "early"
    early.mkdir()
    _shadow_run(early, lib, folder)
    assert _shadow_run(early, lib, folder)[:2] == ["42", "_Loader"]
    (lib / "demo" / "calc").mkdir()
    (lib / "demo" / "calc" / "__init__.py").write_text("def answer():\n    return 8\n")
    assert _shadow_run(early, lib, folder)[:2] == ["8", "SourceFileLoader"]


def test_a_namespace_folder_earlier_on_the_path_is_not_trusted_to_stay_one(
    tmp_path: Path,
) -> None:
    """A folder ``demo/`` without ``__init__.py`` ahead of the package does not shadow it,
    but an ``__init__.py`` added inside it later would, and leaves ``early`` itself as it
    was: such a module is not stored at all."""
    lib, folder = _project(tmp_path)
    early = tmp_path / "early"
    (early / "demo").mkdir(parents=True)
    _shadow_run(early, lib, folder)
    assert _shadow_run(early, lib, folder)[0] == "42"
    (early / "demo" / "__init__.py").write_text("")
    (early / "demo" / "calc.py").write_text("def answer():\n    return 9\n")
    assert _shadow_run(early, lib, folder)[:2] == ["9", "SourceFileLoader"]


def test_a_module_that_is_not_where_its_name_leads_is_not_stored(tmp_path: Path) -> None:
    """Loaded from a file by hand under another name: a later ``import`` of that name
    must not get it (the path search would not find it there)."""
    lib, folder = _project(tmp_path)
    code = (
        f"import sys; sys.path[:0] = [{str(lib)!r}, {str(ROOT)!r}]\n"
        f"from reasonix._codecache import install; install({str(folder)!r})\n"
        "import importlib.util as u\n"
        f"s = u.spec_from_file_location('other', {str(lib / 'demo' / 'calc.py')!r})\n"
        "m = u.module_from_spec(s); sys.modules['other'] = m; s.loader.exec_module(m)\n"
        "try:\n    import other_probe\nexcept ImportError:\n    pass\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for _ in range(2):
        subprocess.run([sys.executable, "-c", code], env=env, timeout=60, check=True)
    (lib / "other.py").write_text("def answer():\n    return 1\n")
    probe = (
        f"import sys; sys.path[:0] = [{str(lib)!r}, {str(ROOT)!r}]\n"
        f"from reasonix._codecache import install; install({str(folder)!r})\n"
        "import other; print(other.answer())\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], env=env, timeout=60, check=True,
                         capture_output=True, text=True)  # fmt: skip
    assert out.stdout.split() == ["1"]
