"""The vendor-shaped streams of tests/provider/test_traffic_*.py, through the built .pyz.

The same tables and expectations as the in-process replays, with the archive a
user runs in a process of its own: what it shows, the calls it sends back, the
usage, how the answer ended and the next request's body (issue 33).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "provider"))

from test_traffic_anthropic import CASES as ANTHROPIC
from test_traffic_openai import CASES as OPENAI
from test_traffic_responses import CASES as RESPONSES
from traffic_kit import Case, replay_pyz, verify


def _cases(table: list[Any]) -> list[Case]:
    return [c.values[0] if hasattr(c, "values") else c for c in table]


ALL = _cases(OPENAI) + _cases(ANTHROPIC) + _cases(RESPONSES)


def test_the_tables_hold_at_least_forty_streams() -> None:
    assert len(ALL) >= 40
    assert len({(c.kind, c.name) for c in ALL}) == len(ALL)
    assert all(c.source for c in ALL)


@pytest.mark.parametrize("case", ALL, ids=[f"{c.kind}-{c.name}" for c in ALL])
def test_a_vendor_stream_through_the_archive(case: Case, tmp_path: Path, pyz: Path) -> None:
    verify(case, replay_pyz(case, tmp_path, pyz))
