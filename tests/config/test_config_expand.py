"""${VAR} and ${VAR:-default} expansion (D22, CFG-11)."""

from __future__ import annotations

import pytest

from reasonix.config.expand import chain_lookup, expand_vars
from reasonix.errors import ConfigError

ENV = {"HOME": "/home/ann", "EMPTY": "", "TOKEN": "t0k"}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("${HOME}/.ssh", "/home/ann/.ssh"),
        ("${MISSING:-fallback}", "fallback"),
        ("${MISSING:-}", ""),
        ("${EMPTY:-d}", "d"),  # shell semantics: empty also takes the default
        ("${EMPTY}", ""),
        ("Bearer ${TOKEN}", "Bearer t0k"),
        ("${HOME}${TOKEN}", "/home/annt0k"),
        ("$HOME", "$HOME"),  # only the braced form is expanded
        ("${not-a-name}", "${not-a-name}"),
        ("no refs", "no refs"),
        ("${MISSING:-a b/c}", "a b/c"),
    ],
)
def test_expand_table(text: str, want: str) -> None:
    assert expand_vars(text, ENV, "test") == want


def test_unset_without_default_names_variable_and_place() -> None:
    with pytest.raises(ConfigError) as info:
        expand_vars("x ${NOPE} y", ENV, "MCP server 'github'", file="/p/reasonix.toml", key="env")
    text = str(info.value)
    assert "NOPE" in text
    assert "github" in text
    assert "/p/reasonix.toml" in text


def test_chain_lookup_order() -> None:
    lookup = chain_lookup({"A": "project"}, {"A": "env", "B": "env"})
    assert expand_vars("${A}-${B}", lookup, "t") == "project-env"
