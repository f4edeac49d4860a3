"""What a frontend asks for: :class:`RuntimeOptions`, a typed form of the run flags.

Every frontend (the line chat, the curses view, ``run``, ``serve``, ``acp``,
Remote and every sub-agent spawn) says "a runtime for this workspace with
these options" by filling this object and calling
:func:`reasonix.boot.build_runtime`. ``cli`` only maps its argparse flags
onto it; nothing here knows about argparse.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.errors import UsageError
from reasonix.lazy import dataclass, field

if TYPE_CHECKING:
    from typing import Any

    from reasonix.agent.subagent.request import ChildRequest
    from reasonix.config.model import McpServerConfig
    from reasonix.tool.ports import ToolPorts

__all__ = ["ABLATE_ARMS", "PERMISSION_MODES", "PLAN_ROUTES", "RuntimeOptions"]

PERMISSION_MODES = (
    "ask", "manual", "auto", "acceptEdits", "dontAsk", "plan", "bypassPermissions", "yolo",
)  # fmt: skip
ABLATE_ARMS = ("subagent", "planner", "retrieval", "compaction", "evidence", "none", "all")  # D17
# `run --plan | --plan-approve | --plan-only` as routes (reasonix.agent.coordinator.Route)
PLAN_ROUTES = ("plan_then_execute", "plan_for_approval", "plan_only")


@dataclass
class RuntimeOptions:
    """The choices one runtime is built from; every field has a neutral default.

    ``resume`` is None for "do not resume", ``""`` for the latest session and
    any other text for an id, path or title query. ``interactive`` says
    whether someone can answer approval questions (a chat view, a browser, an
    editor): False means headless, where every Ask fails closed.
    """

    workspace: Path | str | None = None  # None: the current directory
    model: str | None = None
    effort: str | None = None
    max_steps: int | None = None
    add_dirs: list[str] = field(default_factory=list)
    continue_latest: bool = False
    resume: str | None = None
    copy: bool = False
    allowed_tools: list[str] = field(default_factory=list)
    permission_mode: str | None = None
    yolo: bool = False
    auto: bool = False
    ablate: str | list[str] | None = None
    mcp_debug: str | None = None
    interactive: bool = False
    # the first turn's trusted routing metadata (COORD-2): a PLAN_ROUTES value,
    # `--goal OBJECTIVE`, `--approve-plan` (continue a saved plan)
    plan: str | None = None
    goal: str | None = None
    approve_plan: bool = False
    # extra config overrides as dotted keys (flag precedence), for frontends that set more
    overrides: dict[str, Any] = field(default_factory=dict)
    # the workspace's trust for this run: True (``--trust``, a yes just given), False
    # (declined), None (the environment, then the user's store; config/trust.py)
    trust: bool | None = None
    # a ready Provider instead of the configured one (``reasonix replay`` serves a recording);
    # no API key is needed then
    provider: Any = None
    mcp_servers: list[McpServerConfig] = field(default_factory=list)
    ports: ToolPorts | None = None
    # a sub-agent: the spawn primitive's resolved request (system prompt, tool narrowing,
    # write claim, parent ids, depth …); None for every frontend (boot/subagents.py)
    child: ChildRequest | None = None

    def mode(self) -> str | None:
        """The permission posture the flags ask for (None: the configured one)."""
        if self.yolo:
            return "bypassPermissions"
        if self.auto:
            return "auto"
        if self.permission_mode is not None and self.permission_mode not in PERMISSION_MODES:
            raise UsageError(
                f"unknown permission mode {self.permission_mode!r}; "
                f"known: {', '.join(PERMISSION_MODES)}"
            )
        return "ask" if self.permission_mode == "manual" else self.permission_mode

    def plan_mode(self) -> bool:
        """True when ``--permission-mode plan`` asks for Plan mode (whatever the posture)."""
        return self.permission_mode == "plan"

    def check_routing(self) -> None:
        """Validate the plan/goal flags (UsageError)."""
        if self.plan is not None and self.plan not in PLAN_ROUTES:
            raise UsageError(f"unknown plan route {self.plan!r}; known: {', '.join(PLAN_ROUTES)}")
        if self.goal is not None and not self.goal.strip():
            raise UsageError("--goal needs an objective")
        if sum([self.plan is not None, self.goal is not None, self.approve_plan]) > 1:
            raise UsageError("--plan*, --goal and --approve-plan exclude each other")

    def resolved_workspace(self) -> Path:
        """The workspace directory, resolved; a UsageError when it is not a directory."""
        raw = self.workspace
        ws = Path(raw).expanduser() if raw else Path.cwd()
        if not ws.is_dir():
            raise UsageError(f"--dir {raw}: not a directory")
        return ws.resolve()

    def arms(self) -> list[str]:
        """The ``--ablate`` arms, validated (D17)."""
        raw = self.ablate or ""
        items = raw.split(",") if isinstance(raw, str) else list(raw)
        arms = [a.strip() for a in items if a.strip()]
        unknown = [a for a in arms if a not in ABLATE_ARMS]
        if unknown:
            raise UsageError(
                f"--ablate: unknown arm(s) {', '.join(unknown)}; known: {', '.join(ABLATE_ARMS)}"
            )
        return arms

    def config_flags(self, workspace: Path) -> dict[str, Any]:
        """The flag layer of the config merge (flag > project > home > defaults)."""
        add_dirs = [str((workspace / d).resolve()) for d in self.add_dirs]
        for d in add_dirs:
            if not Path(d).is_dir():
                raise UsageError(f"--add-dir {d}: not a directory")
        flags: dict[str, Any] = {
            "default_model": self.model,
            "agent.effort": self.effort,
            "agent.max_steps": self.max_steps,
            "permissions.mode": self.mode(),
            "sandbox.allow_write": add_dirs or None,
        }
        flags.update(self.overrides)
        return flags
