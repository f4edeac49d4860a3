"""What a run may have imported when its first model request leaves (issue 20).

A real ``reasonix run`` (a subprocess, against a loopback fake) is watched
with an audit hook: at the first ``reasonix.h1.send`` (or ``http.client.send``)
of a POST the hook writes down ``sys.modules``. No timing is measured; the test checks the
*set*: every ``reasonix`` module must be on :data:`ALLOWED` (adding one to
the first-request path is a decision, made here), and the heavy modules in
:data:`FORBIDDEN` must not be there at all. The run uses a clean interpreter
(a virtual environment of its own), so nothing a ``.pth`` file imports hides a
module the run itself would load.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from e2e.e2e_task_env import clean_env, clean_python, write_project
from fakes import FakeServer, ToolSpec, Turn

ROOT = Path(__file__).resolve().parent.parent

# The first-request path, package by package. Everything else loads on first use.
ALLOWED: frozenset[str] = frozenset(
    """
    reasonix reasonix.cancel reasonix.errors reasonix.lazy reasonix.slices
    reasonix.idle reasonix.digest reasonix.charsets reasonix.which
    reasonix.cli reasonix.cli.flags reasonix.cli.argspec reasonix.cli.main reasonix.cli.output
    reasonix.cli.run_cmd reasonix.cli.safe_text reasonix.cli.setup_run
    reasonix.boot reasonix.boot.coordination reasonix.boot.options reasonix.boot.parts
    reasonix.boot.permissions reasonix.boot.plugins reasonix.boot.runtime
    reasonix.boot.sessions reasonix.boot.smallprompt reasonix.boot.subagents
    reasonix.config reasonix.config.dotenv reasonix.config.expand
    reasonix.config.hooks reasonix.config.layers reasonix.config.legacy reasonix.config.loader
    reasonix.config.mcp reasonix.config.model reasonix.config.paths reasonix.config.presets
    reasonix.config.providers reasonix.config.safe_read reasonix.config.schema
    reasonix.config.tomledit reasonix.config.tomlparse reasonix.config.tomlsimple
    reasonix.config.home reasonix.config.trust reasonix.config.trust_rules
    reasonix.config.trust_store reasonix.agent.lease reasonix.config.claude_settings
    reasonix.provider reasonix.provider.base reasonix.provider.budget reasonix.provider.http
    reasonix.provider.h1 reasonix.provider.openai reasonix.provider.openai.fold
    reasonix.provider.openai.wire reasonix.provider.probe
    reasonix.provider.sockets reasonix.provider.sse reasonix.provider.types
    reasonix.provider.sampling
    reasonix.tool reasonix.tool.base reasonix.tool.builtin reasonix.tool.builtin._catalog
    reasonix.tool.children reasonix.tool.paths reasonix.tool.ports
    reasonix.agent reasonix.agent.budget reasonix.agent.cachebreak reasonix.agent.checklog
    reasonix.agent.checkpoints reasonix.agent.turnrecorder reasonix.agent.compaction
    reasonix.agent.context
    reasonix.agent.directives reasonix.agent.events reasonix.agent.execute reasonix.agent.hooks
    reasonix.agent.instructions reasonix.agent.loop reasonix.agent.nudge
    reasonix.agent.oversize reasonix.agent.prompt reasonix.agent.session
    reasonix.agent.lazy_records
    reasonix.agent.stream reasonix.agent.telemetry reasonix.agent.tokens reasonix.agent.window
    reasonix.agent.spend reasonix.agent.toolpin
    reasonix.agent.coordinator reasonix.agent.coordinator.goal reasonix.agent.coordinator.host
    reasonix.agent.coordinator.plan reasonix.agent.coordinator.planmode
    reasonix.agent.coordinator.routing
    reasonix.agent.memory reasonix.agent.memory._catalog reasonix.agent.memory.declared
    reasonix.agent.memory.wiring
    reasonix.agent.subagent reasonix.agent.subagent.profile reasonix.agent.subagent.skills
    reasonix.agent.subagent.spec reasonix.agent.subagent.tool_schemas
    reasonix.agent.subagent.agents
    reasonix.command reasonix.command.frontmatter
    reasonix.permission reasonix.permission.approval reasonix.permission.bash
    reasonix.permission.bash.classify reasonix.permission.bash.lexer
    reasonix.permission.bash.model reasonix.permission.escape reasonix.permission.modes
    reasonix.permission.policy reasonix.permission.rules reasonix.permission.scope
    reasonix.permission.sandbox reasonix.permission.sandbox.bwrap
    reasonix.permission.sandbox.env reasonix.permission.sandbox.seatbelt
    reasonix.plugin reasonix.plugin.mcp reasonix.plugin.mcp.render reasonix.plugin.mcp.tools
    """.split()  # noqa: SIM905 - one module name per word reads better than a literal
)

# Never before the first request: the dataclasses machinery (and what it imports),
# any tool implementation, MCP connections, the two-model coordinator, the spawn
# code, the memory stores and BM25 (declared from data; recall looks for a fact file),
# the bash classifier and the sandbox backends (the first bash call loads them), the
# command layer (skills need only the frontmatter reader), the TOML library (the
# config here is plain TOML), argparse (so is the command line).
FORBIDDEN: frozenset[str] = frozenset(
    {
        "tomllib",  # a plain config is read without it (config.tomlsimple)
        # subprocess brings selectors and locale: git runs only once a tool writes
        # (reasonix.agent.checkpoints), bash only when the model calls it
        "subprocess",
        "locale",
        "tomli",
        "argparse",  # a plain `run` command line is read without it (cli.argspec)
        "gettext",
        # an http endpoint needs no TLS, and the provider's HTTP/1.1 is its own
        # (reasonix.provider.h1): urllib only for proxies and redirects
        "ssl",
        "string",  # it compiles Template's pattern (reasonix.charsets)
        # shutil brings fnmatch, bz2 and lzma (reasonix.which finds git and bwrap);
        # tempfile brings shutil and random; random brings math, bisect and SHA-512
        "shutil",
        "tempfile",
        "random",
        "bz2",
        "lzma",
        "_hashlib",  # OpenSSL's hashes: a slug hashes a short path (reasonix.digest)
        "http.client",
        "email.parser",
        "urllib.request",
        "reasonix.provider.netio",
        "reasonix.plugin.mcp.manager",
        "reasonix.agent.coordinator.coordinator",
        "reasonix.agent.coordinator.planner",
        "reasonix.agent.subagent.spawn",
        "reasonix.agent.subagent.scheduler",
        "reasonix.agent.subagent.tools",
        "reasonix.agent.subagent.fleet",
        "reasonix.agent.memory.catalog",
        "reasonix.agent.memory.bm25",
        "reasonix.agent.memory.facts",
        "reasonix.agent.memory.tools",
        "reasonix.permission.bash.classify",
        "reasonix.permission.sandbox.bwrap",
        "reasonix.command.registry",
    }
    | {
        f"reasonix.tool.builtin.{name}"
        for name in (
            "bash",
            "bash_output",
            "code_index",
            "delete_range",
            "delete_symbol",
            "edit_file",
            "glob",
            "grep",
            "kill_shell",
            "ls",
            "move_file",
            "multi_edit",
            "notebook_edit",
            "read_file",
            "todo_write",
            "wait",
            "web_fetch",
            "write_file",
        )
    }
)

# Classes a run's first request must not build as dataclasses (dataclasses.dataclass
# costs about a millisecond a class): a small window's prompt offer, the sub-agent
# scheduler's limits (checked without making them), and the value records every run
# makes before it (named tuples: routing, goal budgets, the tool ports).
NOT_BUILT: frozenset[str] = frozenset(
    {
        "reasonix.boot.smallprompt.Offer",
        "reasonix.agent.subagent.spec.SchedulerPolicy",
        "reasonix.agent.directives.Directive",
        "reasonix.agent.coordinator.routing.TurnMeta",
        "reasonix.agent.coordinator.routing.RouteDecision",
        "reasonix.agent.coordinator.goal.Budgets",
        "reasonix.tool.ports.ToolPorts",
        # the run's accumulators and services (plain classes) and its skill, checkpoint and
        # local-capability records (named tuples)
        "reasonix.cli.output.RunOutcome",
        "reasonix.agent.telemetry.Telemetry",
        "reasonix.agent.spend.RunBudget",
        "reasonix.agent.subagent.skills.Skill",
        "reasonix.agent.subagent.skills.SkillSet",
        "reasonix.agent.compaction.Checkpoint",
        "reasonix.agent.compaction.Projection",
        "reasonix.plugin.mcp.tools.LocalCapability",
        "reasonix.tool.ToolContext",
        "reasonix.tool.base.FunctionTool",
    }
)

_DRIVER = r"""
import json, sys
out, seen = sys.argv[1], []
def watch(event, args):
    # the first model request: a local server's window probe may POST /api/show first
    head = bytes(args[1][:200]) if event in ("http.client.send", "reasonix.h1.send") else b""
    if not seen and head.startswith(b"POST ") and b"/chat/completions" in head.split(b"\r\n")[0]:
        seen.append(1)
        built = [  # the dataclasses made so far (reasonix.lazy builds one at first use)
            f"{name}.{cls.__name__}"
            for name, module in list(sys.modules.items()) if name.startswith("reasonix")
            for cls in list(vars(module).values())
            if isinstance(cls, type) and cls.__module__ == name
            and type(cls.__dict__.get("__dataclass_fields__")) is dict
        ]
        with open(out, "w") as fh:
            json.dump({"modules": sorted(sys.modules), "built": built}, fh)
sys.addaudithook(watch)
sys.argv = ["reasonix", *sys.argv[2:]]
import runpy
runpy.run_module("reasonix", run_name="__main__")
"""


def _modules_at_first_request(tmp_path: Path) -> tuple[set[str], str, set[str]]:
    """The modules loaded when the first POST left, the second request's body, and
    the dataclasses built by then."""
    ws = tmp_path / "repo"
    ws.mkdir()
    (ws / "calc.py").write_text("x = 1\n")
    script = [Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')]), Turn.text_only("ok")]
    out = tmp_path / "modules.json"
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        env = clean_env(tmp_path)
        python = clean_python(tmp_path)
        done = subprocess.run(
            [python, "-c", _DRIVER, str(out), "run", "--json", "-y", "read calc.py"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        posts = [r for r in srv.requests if r.method == "POST"]
        second = json.dumps(posts[1].json) if len(posts) > 1 else ""
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["subtype"] == "success"
    seen = json.loads(out.read_text())
    return set(seen["modules"]), second, set(seen["built"])


def test_the_first_request_loads_only_the_first_request_path(tmp_path: Path) -> None:
    modules, second, built = _modules_at_first_request(tmp_path)
    ours = {m for m in modules if m == "reasonix" or m.startswith("reasonix.")}
    assert not ours - ALLOWED, f"new on the first-request path: {sorted(ours - ALLOWED)}"
    assert not modules & FORBIDDEN, (
        f"loaded before the first request: {sorted(modules & FORBIDDEN)}"
    )
    assert not built & NOT_BUILT, f"built before the first request: {sorted(built & NOT_BUILT)}"
    assert "reasonix.config.model.Config" in built  # the check sees a built dataclass
    assert "reasonix.provider.openai" in ours and "reasonix.tool.builtin._catalog" in ours
    # read_file was not loaded for the first request, yet ran when the model called it
    assert "x = 1" in second


def test_every_allowed_name_is_a_module_of_the_package() -> None:
    """A module removed from the package leaves the list too (no stale permission)."""
    import importlib.util

    gone = sorted(name for name in ALLOWED if importlib.util.find_spec(name) is None)
    assert not gone, gone
