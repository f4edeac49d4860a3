"""ToolContext is a plain class (issue 39): what its dataclass gave is kept by hand."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from reasonix.cancel import Cancel
from reasonix.tool import ToolContext
from reasonix.tool.ports import ToolPorts


def test_each_context_gets_its_own_defaults() -> None:
    one, two = ToolContext(), ToolContext()
    assert one.workspace == Path.cwd() and one.bash_timeout == 120.0 and one.headless
    for name in ("write_roots", "forbid_read", "secrets", "extra", "cancel", "ports"):
        assert getattr(one, name) is not getattr(two, name), name
    assert isinstance(one.cancel, Cancel) and isinstance(one.ports, ToolPorts)
    one.extra["k"] = 1
    one.write_roots.append(Path("/x"))
    assert two.extra == {} and two.write_roots == []


def test_the_parameters_are_the_fields_in_their_order() -> None:
    names = list(inspect.signature(ToolContext).parameters)
    assert names == [
        "workspace", "cwd", "write_roots", "forbid_read", "secrets", "cancel", "bash_timeout",
        "sandbox", "session_id", "state_dir", "config_dir", "progress", "headless", "extra",
        "ports", "call_id",
    ]  # fmt: skip
    assert names == list(vars(ToolContext()))  # replace() copies exactly these


def test_replace_changes_the_named_fields_and_shares_the_rest() -> None:
    extra: dict[str, object] = {"hooks": None}
    ctx = ToolContext(workspace=Path("/w"), session_id="s1", extra=extra)
    copy = ctx.replace(call_id="c1", session_id="s2")
    assert copy is not ctx and type(copy) is ToolContext
    assert (copy.call_id, copy.session_id) == ("c1", "s2")
    assert (ctx.call_id, ctx.session_id) == ("", "s1")  # the original is unchanged
    assert copy.extra is extra and copy.cancel is ctx.cancel and copy.workspace == Path("/w")
    with pytest.raises(TypeError):
        ctx.replace(no_such_field=1)
