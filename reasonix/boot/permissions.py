"""The run's permission gate, write-scope gate, sandbox-escape gate and tool context.

CFG-10, CFG-13/14; spec §3.7 and §9 for the escape.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.execute import EventApprover
from reasonix.agent.session import Session
from reasonix.config.claude_settings import RuleOrigin
from reasonix.config.model import Config
from reasonix.errors import ConfigError
from reasonix.tool import ToolContext
from reasonix.tool.ports import ToolPorts

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "build_gate", "escape_gate", "naming_file", "scope_gate", "tool_context", "usable_rules",
]  # fmt: skip


@contextlib.contextmanager
def naming_file(cfg: Config, dotted: str) -> Iterator[None]:
    """Re-raise a ConfigError from a lower layer with the config file that set ``dotted``."""
    try:
        yield
    except ConfigError as err:
        if err.file:
            raise
        key = err.key or dotted
        source = cfg.sources.get(key) or cfg.sources.get(dotted, "")
        file = source if source not in ("", "default", "flag") else None
        raise ConfigError(err.detail, file=file, line=err.line, key=key) from err


def usable_rules(cfg: Config) -> tuple[dict[str, list[str]], dict[RuleOrigin, str]]:
    """The config's allow/ask/deny lists, and the rules left out of them with the reason.

    A rule from a Claude Code settings file that our grammar refuses (say
    ``mcp__github__get_*``) is left out, as Claude skips what it cannot read;
    the same in ``reasonix.toml`` stays a ConfigError (our own file, our syntax).
    """
    from reasonix.permission import parse_rule

    lists = {
        "allow": list(cfg.permissions.allow),
        "ask": list(cfg.permissions.ask),
        "deny": list(cfg.permissions.deny),
    }
    claude = [o for o in cfg.permission_rules if Path(o.file).parent.name == ".claude"]
    ours = {(o.kind, o.rule) for o in cfg.permission_rules if o not in claude and not o.skipped}
    refused: dict[RuleOrigin, str] = {}
    for origin in claude:
        if origin.skipped or (origin.kind, origin.rule) in ours:
            continue  # left out already, or ours too (where it stays an error)
        try:
            parse_rule(origin.rule)
        except ConfigError as exc:
            refused[origin] = exc.detail.removeprefix(f"invalid permission rule {origin.rule!r}: ")
            lists[origin.kind] = [r for r in lists[origin.kind] if r != origin.rule]
    return lists, refused


def build_gate(
    cfg: Config,
    allowed_tools: list[str],
    approver: EventApprover | None,
    workspace: Path,
    notices: list[str] | None = None,
) -> Any:
    """The permission gate; ``approver`` None means headless (Ask fails closed).

    ``notices`` receives what was left out of the rules (:func:`usable_rules`).
    """
    from reasonix import permission
    from reasonix.config import paths

    rules, refused = usable_rules(cfg)
    if notices is not None:
        notices += [
            f"{o.where()}: permissions.{o.kind} rule {o.written or o.rule!r} skipped: {why}"
            for o, why in refused.items()
        ]
    with naming_file(cfg, "permissions.allow"):
        policy = permission.Policy(
            mode=cfg.permissions.mode,
            allow=rules["allow"],
            ask=rules["ask"],
            deny=rules["deny"],
            allow_dynamic_bash=cfg.permissions.allow_dynamic_bash,
            workspace=workspace,
            protected=[paths.user_config_path()],  # the user config steers every run
            secrets=paths.secret_paths(),  # a bash command naming one asks, in every mode
        )
    extra = permission.parse_allowed_tools(allowed_tools)
    if extra:
        policy = policy.with_allow(extra)

    def persist(rule: str) -> None:  # D3: "always allow" goes to the project reasonix.toml
        from reasonix.config import tomledit

        tomledit.append_to_array(workspace / "reasonix.toml", "permissions", "allow", rule)

    gate = permission.Gate(policy, approver, persist)
    gate.preview = lambda rule: rule_preview(rule, workspace)
    return gate


def rule_preview(rule: str, workspace: Path) -> str:
    """What ``rule`` would have approved in this project's sessions (the rule simulator)."""
    from reasonix.agent.recorded import project_sessions, recorded_calls
    from reasonix.permission.simulate import simulate

    calls = recorded_calls(project_sessions(workspace))
    return simulate(rule, calls, str(workspace)).summary()


def scope_gate(roots: list[Path], workspace: Path, approver: EventApprover | None) -> Any:
    """CFG-13/14: the run's write-scope gate; its questions reuse the tool-approval flow.

    ``approver`` None = headless: the gate refuses and names ``--add-dir``.
    """
    from reasonix import permission
    from reasonix.config import paths

    def persist(directory: str) -> None:
        from reasonix.config import tomledit

        tomledit.append_to_array(workspace / "reasonix.toml", "sandbox", "allow_write", directory)

    return permission.ScopeGate(
        roots=[str(r) for r in roots],
        protected=[str(paths.state_dir()), str(paths.home_dir())],
        approver=_scope_question(approver) if approver is not None else None,
        persist=persist,
    )


def escape_gate(gate: Any, approver: EventApprover | None) -> Any:
    """§3.7/§9: one unsandboxed bash retry, asked freshly of a human every time.

    ``approver`` None = headless: every request is refused (YOLO and auto too).
    Whatever the run's policy denies (a deny rule) is never offered; the policy is
    read at call time, so a mode change during the session counts.
    """
    from reasonix import permission

    def denied(command: str) -> str:
        verdict = gate.policy.evaluate("bash", False, {"command": command})
        return str(verdict.reason) if verdict.decision is permission.Decision.DENY else ""

    return permission.EscapeGate(approver=approver, denied=denied)


def _scope_question(approver: EventApprover) -> Callable[[Any], Any]:
    """Ask a write-scope question as a tool approval: once / session / always / deny.

    "Always" means "save into the project ``[sandbox].allow_write``".
    """
    from reasonix import permission

    answers = {
        permission.ApprovalChoice.ONCE: permission.ScopeChoice.ONCE,
        permission.ApprovalChoice.SESSION: permission.ScopeChoice.SESSION,
        permission.ApprovalChoice.ALWAYS: permission.ScopeChoice.PROJECT,
    }

    def ask(request: Any) -> Any:
        reason = request.justification + (f" — {request.warning}" if request.warning else "")
        choice = approver(
            permission.ApprovalRequest(
                tool_name="write scope",
                summary=f"make {request.path} writable",
                args={"path": request.path},
                choices=tuple(permission.ApprovalChoice),
                suggested_rule=f"[sandbox].allow_write += {request.path}",
                reason=reason,
            )
        )
        return answers.get(choice, permission.ScopeChoice.DENY)

    return ask


def tool_context(
    cfg: Config,
    workspace: Path,
    session: Session,
    headless: bool,
    approver: EventApprover | None = None,
    ports: ToolPorts | None = None,
) -> ToolContext:
    """The tools' view of the run: roots, forbidden paths, sandbox, secrets to hide.

    ``ports`` (from the frontend) routes file and bash I/O elsewhere (ACP editors).
    """
    from reasonix.config import paths
    from reasonix.permission.sandbox import SandboxSettings

    # [sandbox].workspace_root may widen or move the root the tools are confined to (CFG-10).
    workspace = Path(cfg.sandbox.workspace_root or workspace)
    if not workspace.is_dir():
        source = cfg.sources.get("sandbox.workspace_root", "")
        raise ConfigError(
            f"{workspace} is not a directory",
            file=source if source not in ("", "default", "flag") else None,
            key="sandbox.workspace_root",
        )
    roots = [workspace, *(Path(p) for p in cfg.sandbox.allow_write)]
    forbid = [Path(p) for p in cfg.sandbox.forbid_read]
    secrets = paths.secret_paths()
    sandbox = SandboxSettings(
        cfg.sandbox.bash,
        workspace,
        roots,
        # Reasonix's secrets are masked in the jail like forbid_read (bash and hooks)
        [*forbid, *secrets],
        cfg.sandbox.network,
        # the agent's own state and config stay read-only even inside a write root
        read_only=[paths.state_dir(), paths.home_dir()],
        remember=paths.cache_dir() / "sandbox",
    )
    return ToolContext(
        workspace=workspace,
        cwd=workspace,
        write_roots=roots,
        forbid_read=forbid,
        secrets=secrets,
        bash_timeout=cfg.tools.bash_timeout_seconds,
        sandbox=sandbox,
        session_id=session.id,
        state_dir=paths.state_dir(),
        config_dir=paths.home_dir(),
        headless=headless,
        ports=ports or ToolPorts(),
        # provider keys never reach the model's shell (a `printenv` would leak them)
        extra={
            "secret_env": sorted({p.api_key_env for p in cfg.providers if p.api_key_env}),
            "write_scope": scope_gate(roots, workspace, None if headless else approver),
        },
    )
