"""Every class in reasonix is the class ``dataclasses.dataclass`` makes (issue 39).

Start-up used to defer dataclasses with hand-written stand-ins that dropped
``slots=True`` and compared fields as tuples. These tests walk the whole
package and hold each dataclass to the standard library's behaviour. The immutable
records on the first-request path are ``typing.NamedTuple`` instead (docs/SPEC.md, "How
start-up stays fast"); the last two tests hold them to what a NamedTuple promises.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

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


def _declared_with_slots(where: Path) -> list[tuple[str, str]]:
    """(module, class name) of every ``@dataclass(..., slots=True)`` in the source under
    ``where``."""
    import ast

    found = []
    for path in sorted(where.rglob("*.py")):
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
    # The streamed events and SSE records that asked for slots are NamedTuples now (see
    # test_immutable_records_are_named_tuples); the walk still sees a slotted dataclass
    # (the one in tests/test_lazy.py) and holds any in the package to its promise.
    assert ("tests.test_lazy", "Child") in _declared_with_slots(ROOT / "tests")
    for module, name in _declared_with_slots(ROOT / "reasonix"):
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


# -- immutable records: typing.NamedTuple --------------------------------------------------

# The frozen records every run defines before its first request (issue 39): a NamedTuple
# costs a tenth of a dataclass to define and a slotted dataclass cannot be deferred.
RECORDS = {
    "reasonix.agent.events": {
        "StepStart", "TextDelta", "ReasoningDelta", "ToolStart", "ToolEnd", "WebSearch",
        "SandboxEscape", "UsageReport", "Notice", "Phase", "SubagentProgress", "Done", "Error",
    },
    "reasonix.provider.sse": {"ServerSentEvent"},
    "reasonix.provider.http": {"RetryPolicy", "Timeouts"},
    "reasonix.config.trust": {"TrustItem"},
    "reasonix.permission.approval": {"GateOutcome"},
    "reasonix.permission.policy": {"Verdict"},
    "reasonix.permission.bash.model": {"Segment", "BashAnalysis"},
    "reasonix.permission.bash.lexer": {"Word"},
    "reasonix.agent.telemetry": {"Cost"},
    "reasonix.agent.subagent.skills": {"Skill"},
    "reasonix.agent.subagent.agents": {"AgentSkill"},  # a Skill whose folder is None
    "reasonix.plugin.mcp.tools": {"LocalCapability"},
    "reasonix.agent.execute": {"_PreHooks"},
    "reasonix.agent.compaction": {"Checkpoint", "Entry"},
    "reasonix.agent.tokens": {"_Anchor"},
}  # fmt: skip


def _named_tuples(module_name: str) -> dict[str, type]:
    module = importlib.import_module(module_name)
    return {
        name: value
        for name, value in vars(module).items()
        if isinstance(value, type)
        and value.__module__ == module_name
        and issubclass(value, tuple)
        and hasattr(value, "_fields")
    }


def _records() -> list[type]:
    out = []
    for module_name, names in RECORDS.items():
        found = _named_tuples(module_name)
        assert names <= set(found), (module_name, names - set(found))
        out += [found[k] for k in sorted(found)]
    return out


def test_immutable_records_are_named_tuples() -> None:
    """Each record (and any other NamedTuple in those modules): not a dataclass, no
    ``__dict__`` on instances, read-only fields, no mutable default shared by instances,
    and ``==``/``hash`` by field values."""
    records = _records()
    assert len(records) >= 17
    for cls in records:
        assert not dataclasses.is_dataclass(cls), cls
        assert vars(cls)["__slots__"] == (), cls
        values = [f"v{i}" for i in range(len(cls._fields))]  # type: ignore[attr-defined]
        one, two = cls._make(values), cls._make(list(values))  # type: ignore[attr-defined]
        assert not hasattr(one, "__dict__"), cls
        with pytest.raises(AttributeError):
            setattr(one, cls._fields[0], "changed")  # type: ignore[attr-defined]
        with pytest.raises(AttributeError):
            one.extra = 1  # type: ignore[attr-defined]
        assert one == two and hash(one) == hash(two), cls
        other = one._replace(**{cls._fields[-1]: "other"})  # type: ignore[attr-defined]
        assert other != one and type(other) is cls, cls
        for name, default in cls._field_defaults.items():  # type: ignore[attr-defined]
            assert not isinstance(default, (dict, list, set, bytearray)), (cls, name)


def test_record_equality_is_tuple_equality_nan_included() -> None:
    """What a NamedTuple's ``==`` is (the standard library's, on every Python we support):
    tuple equality, which tries identity before ``==`` on each item. So a record holding
    the very same NaN object equals itself and its copy, while two distinct NaNs differ.
    (A dataclass's ``__eq__`` compares tuples of fields up to 3.12 — the same answers — and
    field by field from 3.13, where the same NaN object makes it unequal.) Records of
    different classes with equal fields are equal, as tuples are: consumers dispatch on
    ``isinstance`` and serialise fields by name, never the record itself."""
    from reasonix.agent.events import ReasoningDelta, TextDelta, ToolEnd

    nan = float("nan")
    a = ToolEnd("c1", "bash", "out", False, nan)
    assert a == ToolEnd("c1", "bash", "out", False, nan) == a._replace()
    assert hash(a) == hash(ToolEnd("c1", "bash", "out", False, nan))
    assert (a == ToolEnd("c1", "bash", "out", False, nan)) == ((nan,) == (nan,))
    assert ToolEnd("c1", "bash", "out", False, float("nan")) != ToolEnd(
        "c1", "bash", "out", False, float("nan")
    )
    assert a != a._replace(seconds=1.0) and a._replace(seconds=1.0) == a._replace(seconds=1)
    assert TextDelta("x") == ReasoningDelta("x") == ("x",)  # type: ignore[comparison-overlap]
    assert not isinstance(TextDelta("x"), ReasoningDelta)
    assert json.dumps(TextDelta("x")) == '["x"]'  # why frontends build dicts field by field
