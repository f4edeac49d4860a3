"""Every class in reasonix is the class ``dataclasses.dataclass`` makes (issue 39).

Start-up used to defer dataclasses with hand-written stand-ins that dropped
``slots=True`` and compared fields as tuples. These tests walk the whole
package and hold each dataclass to the standard library's behaviour.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pkgutil
import subprocess
import sys
from pathlib import Path

import reasonix

ROOT = Path(__file__).resolve().parent.parent


def _all_dataclasses() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(reasonix.__path__, "reasonix."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and dataclasses.is_dataclass(value)
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[k] for k in sorted(found)]


def _bare(cls: type, value: object) -> object:
    """An instance of ``cls`` with every field set to ``value``, no __init__ run."""
    obj = object.__new__(cls)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        object.__setattr__(obj, f.name, value)
    return obj


def test_the_package_declares_many_dataclasses() -> None:
    assert len(_all_dataclasses()) > 150


def _declared_with_slots() -> list[tuple[str, str]]:
    """(module, class name) of every ``@dataclass(..., slots=True)`` in the source."""
    import ast

    found = []
    for path in sorted((ROOT / "reasonix").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and any(
                    k.arg == "slots" and isinstance(k.value, ast.Constant) and k.value.value
                    for k in deco.keywords
                ):
                    found.append((module.removesuffix(".__init__"), node.name))
    return found


def test_slots_asked_for_are_slots_at_run_time() -> None:
    declared = _declared_with_slots()
    assert len(declared) >= 13
    for module, name in declared:
        cls = getattr(importlib.import_module(module), name)
        assert "__slots__" in vars(cls), cls
        assert not hasattr(_bare(cls, None), "__dict__"), cls


def _reference(cls: type) -> type:
    """A class ``dataclasses.make_dataclass`` builds with ``cls``'s fields and options."""
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    spec = [
        (f.name, object, dataclasses.field(compare=f.compare))
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
    ]
    return dataclasses.make_dataclass("Reference", spec, eq=params.eq)


def test_equality_is_the_standard_librarys() -> None:
    """The same NaN object in every field (where comparing tuples and comparing fields one
    by one differ on 3.13), distinct NaNs, and equal numbers: each class answers as a class
    that dataclasses itself made answers."""
    nan = float("nan")
    checked = 0
    for cls in _all_dataclasses():
        if not dataclasses.fields(cls):
            continue
        ref = _reference(cls)
        for one, two in ((nan, nan), (float("nan"), float("nan")), (1, 1)):
            got = _bare(cls, one) == _bare(cls, two)
            assert got == (_bare(ref, one) == _bare(ref, two)), (cls, one, two)
        checked += 1
    assert checked > 150


def test_each_class_matches_a_fresh_dataclass_of_the_same_options() -> None:
    """Same fields, same parameters, same hash rule as dataclasses.dataclass would give."""
    for cls in _all_dataclasses():
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        if params.frozen and params.eq:
            assert cls.__hash__ is not None, cls
        elif params.eq and not params.unsafe_hash and "__hash__" not in vars(cls):
            assert cls.__hash__ is None, cls
        for f in dataclasses.fields(cls):
            assert isinstance(f, dataclasses.Field), (cls, f)


def test_no_start_up_trick_is_left() -> None:
    """No module spells TYPE_CHECKING by hand or reimplements dataclasses or Protocol."""
    offenders = []
    for path in sorted((ROOT / "reasonix").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "TYPE_CHECKING = False" in text or "reasonix.protocols" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
    assert not (ROOT / "reasonix" / "lazy_light.py").exists()


def test_nan_fields_compare_as_the_standard_library_says() -> None:
    """A direct check on one streamed event class, in a clean interpreter."""
    code = (
        "import math\n"
        "from reasonix.provider.types import Usage\n"
        "import dataclasses\n"
        "f = dataclasses.fields(Usage)[0].name\n"
        "a = Usage(**{f: float('nan')}); b = Usage(**{f: float('nan')})\n"
        "print(a == b)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
    assert math.isnan(float("nan"))
