"""QA: when nothing can be summarised, CompactionRequired does not send the user to /compact."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_scripted import ScriptedProvider

import reasonix.provider as provider_registry
from reasonix.agent.context import ContextManager
from reasonix.agent.session import Session
from reasonix.cancel import Cancel
from reasonix.errors import CompactionRequired
from reasonix.provider.types import Message, Role


def test_too_large_fixed_prefix_is_named_not_compact(workspace: Path) -> None:
    prov = provider_registry.new("scripted", {"steps": []})
    assert isinstance(prov, ScriptedProvider)
    system = "rules " * 3000  # the fixed prefix alone is over a 1000-token window
    with Session.create(workspace) as session:
        session.append_message(Message(Role.USER, "hello"))
        ctx = ContextManager(prov, "m", 1000, 0.80, system, [], session)
        with pytest.raises(CompactionRequired) as err:
            ctx.prepare(Cancel())
        assert "too large to summarise away" in str(err.value)
        assert "/compact" not in str(err.value)
        assert ctx.compact(Cancel()).summaries == 0  # a manual compact cannot help either
    assert prov.requests == []  # nothing was paid for
