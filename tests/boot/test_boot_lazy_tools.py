"""The run's tool registry is built from the catalog: no tool module loads before a call.

Structural (which modules are imported, which bytes the request carries), never
timings. Each check runs in a fresh interpreter so nothing imported by other
tests hides an import.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reasonix.tool.builtin import BUILTIN_MODULES

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, sys
EAGER
from reasonix.boot.parts import build_registry
from reasonix.config.model import Config, ToolsConfig
from reasonix.provider.openai.wire import encode_tool
from reasonix.provider.types import ToolSchema

reg = build_registry(Config(tools=ToolsConfig(enabled=ENABLED)), [])
schemas = reg.schemas()
wire = [encode_tool(ToolSchema(**s)) for s in schemas]
tools = sorted(m for m in sys.modules if m.startswith("reasonix.tool.builtin."))
print(json.dumps({
    "modules": tools,
    "names": reg.names(),
    "schemas": json.dumps(schemas, ensure_ascii=False),
    "wire": json.dumps(wire, ensure_ascii=False),
    "types": sorted({type(t).__name__ for t in reg.tools()}),
}))
"""


def _probe(eager: bool, enabled: list[str]) -> dict[str, Any]:
    code = _PROBE.replace(
        "EAGER", "from reasonix.tool import builtin; builtin.load_all()" if eager else ""
    ).replace("ENABLED", repr(enabled))
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


@pytest.mark.parametrize("enabled", [[], ["read_file", "bash", "edit_file"]])
def test_building_the_registry_imports_no_tool_module(enabled: list[str]) -> None:
    lazy = _probe(eager=False, enabled=enabled)
    assert lazy["modules"] == ["reasonix.tool.builtin._catalog"]
    assert lazy["types"] == ["CatalogTool"]
    assert lazy["names"] == sorted(enabled) if enabled else len(lazy["names"]) >= 18


@pytest.mark.parametrize("enabled", [[], ["read_file", "bash", "edit_file"]])
def test_the_request_bytes_equal_the_eager_path(enabled: list[str]) -> None:
    lazy, eager = _probe(eager=False, enabled=enabled), _probe(eager=True, enabled=enabled)
    assert set(BUILTIN_MODULES) <= set(eager["modules"])  # the eager path really loaded them
    assert eager["types"] == ["FunctionTool"]
    assert lazy["names"] == eager["names"]
    # order-sensitive dumps: same keys in the same order, same text, byte for byte
    assert lazy["schemas"] == eager["schemas"]
    assert lazy["wire"] == eager["wire"]


def _unknown_name_error(eager: bool) -> str:
    code = (
        ("from reasonix.tool import builtin; builtin.load_all()\n" if eager else "")
        + "from reasonix.boot.parts import build_registry\n"
        "from reasonix.config.model import Config, ToolsConfig\n"
        "from reasonix.errors import ConfigError\n"
        "try:\n"
        "    build_registry(Config(tools=ToolsConfig(enabled=['read_file', 'nope'])), [])\n"
        "except ConfigError as err:\n"
        "    print(err.key, '|', err)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_an_unknown_enabled_name_is_still_the_same_config_error() -> None:
    lazy = _unknown_name_error(eager=False)
    assert lazy.startswith("tools.enabled | ")
    assert "unknown tool name(s) nope; known: bash, bash_output, " in lazy
    assert lazy == _unknown_name_error(eager=True)
