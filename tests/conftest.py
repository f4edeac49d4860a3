"""Shared pytest setup: make ``tests/`` importable (for ``fakes``) and isolate HOME."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point REASONIX_HOME/STATE at fresh dirs so no test reads the real user config.

    A test's workspace is one the test wrote itself, so it is trusted
    (``REASONIX_TRUST_WORKSPACE=1``, inherited by the .pyz the e2e tests start);
    the trust tests take that away with the ``untrusted`` fixture.
    """
    saved = {
        k: os.environ.get(k)
        for k in (
            "REASONIX_HOME", "REASONIX_STATE_HOME", "REASONIX_CACHE_HOME",
            "REASONIX_TRUST_WORKSPACE",
        )
    }  # fmt: skip
    home = tmp_path_factory.mktemp("rxhome")
    os.environ["REASONIX_HOME"] = str(home)
    os.environ.pop("REASONIX_STATE_HOME", None)
    os.environ.pop("REASONIX_CACHE_HOME", None)
    os.environ["REASONIX_TRUST_WORKSPACE"] = "1"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def untrusted() -> None:
    """No trust from the environment: the workspace is trusted only as a user would trust it."""
    os.environ.pop("REASONIX_TRUST_WORKSPACE", None)  # _isolated_home restores it


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On CI, a test skipped because an external program is MISSING is a failure.

    Interop tests skip loudly on a laptop that lacks bwrap, rg, node or the MCP
    servers; CI installs them all (.ci/run), so a skip there means a broken
    install step and must not pass silently. The word matches in any case
    ("bwrap is missing" counts too).
    """
    outcome = yield
    report = outcome.get_result()
    if not os.environ.get("CI") or not report.skipped:
        return
    reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
    if "missing" in reason.lower():  # "MISSING", "… is missing": any spelling counts
        report.outcome = "failed"
        report.longrepr = f"CI must run this test, but it was skipped: {reason}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Append every skip (node id and reason) to ``$REASONIX_SKIP_LOG``: .ci/run prints
    the count and the list at the end, so no skip goes unnoticed on CI."""
    path = os.environ.get("REASONIX_SKIP_LOG")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        for report in terminalreporter.stats.get("skipped", []):
            longrepr = report.longrepr
            reason = str(longrepr[-1]) if isinstance(longrepr, tuple) else str(longrepr)
            fh.write(f"{report.nodeid}: {' '.join(reason.split())}\n")
