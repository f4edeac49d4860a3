"""Tilde expansion is an expansion: prefix rules do not cover it (PERM-11)."""

from __future__ import annotations

import pytest

from reasonix.permission import Decision, Policy


@pytest.mark.parametrize("command", ["ls ~/.ssh", "cat ~root/.bashrc", "ls ~+/x", "ls ~"])
def test_tilde_words_are_dynamic(command: str) -> None:
    policy = Policy("ask", allow=["Bash(ls:*)", "Bash(cat:*)"])
    assert policy.decide("bash", False, {"command": command}) is Decision.ASK
    assert (
        Policy("auto", allow=["Bash(ls:*)"]).decide("bash", False, {"command": command})
        is Decision.ALLOW
    )  # the ordinary auto fallback still covers dynamic commands


def test_quoted_or_inner_tildes_stay_literal() -> None:
    policy = Policy("ask", allow=["Bash(ls:*)"])
    assert policy.decide("bash", False, {"command": "ls '~/x' a~b"}) is Decision.ALLOW
