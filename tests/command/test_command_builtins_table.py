"""The built-in commands as a table (issue 39): one row per command, one check per rule."""

from __future__ import annotations

from typing import Any

import pytest

from reasonix.command.builtins import BUILTINS, LEAVING, builtin_commands
from reasonix.command.planning import planning_commands
from reasonix.errors import UsageError


class _Host:
    """Records what the built-ins ask of it; answers like a host with a warm cache."""

    def __init__(self, servers: tuple[str, ...] = ()) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.servers = servers

    def cache_break(self, *args: Any) -> str:
        self.calls.append(("cache_break", args))
        return "about 9,000 prompt tokens miss the cache"

    def set_effort(self, level: str) -> str:
        self.calls.append(("set_effort", (level,)))
        return level

    def effort(self) -> str:
        return ""

    def mcp_servers(self) -> list[dict[str, Any]]:
        self.calls.append(("mcp_servers", ()))
        return [{"name": n, "state": "ready"} for n in self.servers]


def _command(host: Any, name: str) -> Any:
    return next(c for c in builtin_commands(host) if c.name == name)


@pytest.mark.parametrize("line", ["bogus", "bogus --yes", "HIGHER"])
def test_an_unknown_effort_is_refused_before_anything_is_asked_or_set(line: str) -> None:
    host = _Host()
    with pytest.raises(UsageError, match="unknown effort"):
        _command(host, "effort").run(line)
    assert host.calls == []


def test_a_known_effort_asks_first_and_sets_once_confirmed() -> None:
    host = _Host()
    effort = _command(host, "effort")
    ask = effort.run("High")
    assert ask.confirm_command == "/effort High --yes"
    assert host.calls == [("cache_break", ("effort", "high"))]
    assert effort.run("High --yes").text == "effort: high from the next request on"
    assert host.calls[-1] == ("set_effort", ("high",))
    assert effort.run("off").text == "effort: default (the provider decides)"
    assert host.calls[-1] == ("set_effort", ("",))


def test_each_command_is_one_row_with_its_help_text() -> None:
    host: Any = _Host()  # only what the built-ins ask of it, not a whole CommandHost
    commands = builtin_commands(host)
    rows = [*BUILTINS, *LEAVING]
    planning = [c.name for c in planning_commands()]
    assert [c.name for c in commands] == [
        *(r.name for r in BUILTINS), *planning, *(r.name for r in LEAVING)
    ]  # fmt: skip
    assert len({r.name for r in rows}) == len(rows)
    for row, command in zip(rows, [c for c in commands if c.name not in planning], strict=True):
        assert row.description and command.description == row.description
        assert command.argument_hint == row.hint and command.kind == "builtin"
        assert (command.complete_args is None) == (row.complete is None)
    assert [r.name for r in rows if r.hidden] == ["quit"]


def test_what_a_completer_remembers_belongs_to_its_host() -> None:
    first, second = _Host(("alpha",)), _Host(("beta",))
    complete_first = _command(first, "mcp").complete_args
    complete_second = _command(second, "mcp").complete_args
    assert [c.text for c in complete_first("auth ")] == ["auth alpha"]
    assert [c.text for c in complete_second("auth ")] == ["auth beta"]
    complete_first("auth a")
    assert first.calls == [("mcp_servers", ())]  # read once, then kept


def test_mcp_enable_and_disable_reach_the_host_and_complete_server_names() -> None:
    calls: list[tuple[str, bool]] = []

    class Host(_Host):
        def mcp_enable(self, name: str, enabled: bool) -> str:
            calls.append((name, enabled))
            return f"{name} {enabled}"

    mcp = _command(Host(("weather", "billing")), "mcp")
    assert mcp.run("disable weather").text == "weather False"
    assert mcp.run("enable weather").text == "weather True"
    assert calls == [("weather", False), ("weather", True)]
    with pytest.raises(UsageError, match="auth\\|enable\\|disable NAME"):
        mcp.run("disable")
    assert [c.text for c in mcp.complete_args("")] == ["auth ", "disable ", "enable "]
    assert [c.text for c in mcp.complete_args("enable ")] == ["enable weather", "enable billing"]
    assert [c.text for c in mcp.complete_args("disable b")] == ["disable billing"]
