"""Loopback fakes of the three provider wire formats (see README.md).

Usage::

    from fakes import FakeServer, Fault, Turn

    with FakeServer("openai", [Fault.status(429, retry_after=0), Turn(text="hi")]) as srv:
        ...  # point a provider at srv.url; inspect srv.requests afterwards
"""

from __future__ import annotations

from fakes import dialects
from fakes.script import Fault, SearchSpec, Step, ToolSpec, Turn, step_from_dict
from fakes.server import FakeServer, RecordedRequest

__all__ = [
    "FakeServer",
    "Fault",
    "RecordedRequest",
    "SearchSpec",
    "Step",
    "ToolSpec",
    "Turn",
    "dialects",
    "step_from_dict",
]
