"""The model-facing entry points: ``task``, ``read_only_task``, ``parallel_tasks``,
``fleet`` and ``run_skill`` (SUB-4, SUB-21, SUB-25).

Each compiles its arguments to :class:`~.spec.ProfileExecSpec` and calls
:meth:`~.spawn.TaskTool.run_profile_spec`; none builds a child itself.
Profile names appear in no schema and no description (SUB-4: the schema is
the same for every project, so the prompt cache holds); the model learns
them from the skill index. ``--ablate subagent`` removes the first four;
``run_skill`` stays, so profile skills can still delegate (SUB-28).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from reasonix.errors import ReasonixError, ToolError
from reasonix.tool import ToolContext, ToolResult
from reasonix.tool.base import FunctionTool

from .allowance import Allowance
from .claims import resolve_claim
from .fleet import FleetItem, FleetPlan, preflight, run_fleet, summary
from .profile import Profile, profile_from_skill
from .skills import SkillSet, read_resource, render_skill
from .spawn import ChildOutcome, TaskTool
from .spec import CapabilityGrant, ContextRequest, ProfileExecSpec, TaskSpec
from .tool_schemas import DESCRIPTIONS, FLEET_MAX, FLEET_MIN, READ_ONLY, SCHEMAS

if TYPE_CHECKING:
    from typing import Any

__all__ = ["FLEET_MAX", "FLEET_MIN", "compile_spec", "contract_tools", "delegation_tools"]


def _profile(skills: SkillSet, name: Any) -> Profile | None:
    if not name:
        return None
    skill = skills.get(str(name))
    if skill is None:
        known = ", ".join(s.name for s in skills.profiles()) or "none"
        raise ToolError(f"no sub-agent profile named {name!r}; profiles: {known}")
    if skill.run_as != "subagent":
        raise ToolError(f"{name!r} is an inline skill, not a sub-agent profile; use run_skill")
    return profile_from_skill(skill)


def compile_spec(
    skills: SkillSet, args: dict[str, Any], *, entry: str, read_only: bool = False,
    label: str = "", ephemeral: bool = False,
) -> ProfileExecSpec:  # fmt: skip
    """One entry point's arguments → a :class:`ProfileExecSpec` (never a child)."""
    paths = args.get("write_paths")
    if paths is not None and not isinstance(paths, list):
        raise ToolError("write_paths must be a list of paths")
    steps = args.get("max_steps") or 0
    if not isinstance(steps, int) or steps < 0:
        raise ToolError("max_steps must be a whole number ≥ 0")
    task = TaskSpec(
        prompt=str(args.get("prompt") or ""),
        model=str(args.get("model") or ""),
        effort=str(args.get("effort") or ""),
        max_steps=steps,
        label=label,
        allowance=_allowance(args),
    )
    grant = CapabilityGrant(
        read_only=read_only or bool(args.get("read_only")),
        write_paths=tuple(str(p) for p in paths) if paths is not None else None,
    )
    context = ContextRequest(
        ephemeral, str(args.get("continue_from") or ""), str(args.get("fork_from") or "")
    )
    return ProfileExecSpec(_profile(skills, args.get("profile")), task, grant, context, entry)


def _amount(args: dict[str, Any], key: str, whole: bool) -> float:
    value = args.get(key) or 0
    kind = int if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or not 0 <= value < float("inf"):
        raise ToolError(f"{key} must be a {'whole ' if whole else ''}number ≥ 0")
    return value


def _allowance(args: dict[str, Any]) -> Allowance:
    """The call's own budget (max_tokens, max_cost, max_turns, max_minutes; 0 = the default)."""
    return Allowance(
        int(_amount(args, "max_tokens", True)),
        float(_amount(args, "max_cost", False)),
        int(_amount(args, "max_turns", True)),
        float(_amount(args, "max_minutes", False)) * 60,
    )


def _result(outcome: ChildOutcome) -> ToolResult:
    return ToolResult(outcome.text, is_error=outcome.verdict.status == "failed")


def _batch(args: dict[str, Any]) -> list[dict[str, Any]]:
    tasks = args.get("tasks")
    if not isinstance(tasks, list) or not FLEET_MIN <= len(tasks) <= FLEET_MAX:
        raise ToolError(f"tasks must be a list of {FLEET_MIN}-{FLEET_MAX} items")
    if not all(isinstance(t, dict) for t in tasks):
        raise ToolError("every item of tasks must be an object with a prompt")
    return tasks


class _Entry:
    """The functions behind the tools, over one runtime's primitive."""

    def __init__(self, prim: TaskTool | None, skills: SkillSet) -> None:
        self.prim, self.skills = prim, skills

    def _run(self, spec: ProfileExecSpec, ctx: ToolContext) -> ChildOutcome:
        if self.prim is None:
            raise ToolError("sub-agents are not available in this session")
        return self.prim.run_profile_spec(
            spec,
            cancel=ctx.cancel,
            call_id=ctx.call_id,
            hooks=ctx.extra.get("hooks"),
        )

    def task(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return _result(self._run(compile_spec(self.skills, args, entry="task"), ctx))

    def read_only_task(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        spec = compile_spec(self.skills, args, entry="read_only_task", read_only=True)
        return _result(self._run(spec, ctx))

    def parallel_tasks(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        items = _batch(args)
        specs = [
            compile_spec(self.skills, a, entry="parallel_tasks", read_only=True, label=str(n))
            for n, a in enumerate(items, start=1)
        ]
        texts: list[str] = [""] * len(specs)
        done = [False] * len(specs)

        def one(n: int) -> None:
            try:
                outcome = self._run(specs[n], ctx)
                texts[n], done[n] = outcome.text, outcome.ok
            except ReasonixError as err:
                texts[n] = f"status: failed — {err}"

        threads = [threading.Thread(target=one, args=(n,), daemon=True) for n in range(len(specs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        head = f"parallel_tasks: {sum(done)}/{len(specs)} complete"
        body = [f"=== {n} ===\n{text}" for n, text in enumerate(texts, start=1)]
        return ToolResult("\n\n".join([head, *body]))

    def fleet(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        items: list[FleetItem] = []
        prim = self.prim
        for n, raw in enumerate(_batch(args), start=1):
            item_id = str(raw.get("id") or n)
            deps = raw.get("depends_on") or []
            if not isinstance(deps, list):
                raise ToolError(f"{item_id}: depends_on must be a list of ids")
            spec = compile_spec(self.skills, raw, entry="fleet", label=item_id)
            claim = None
            if prim is not None and not spec.read_only:
                try:
                    claim = resolve_claim(spec.grant.write_paths, prim.workspace, prim.roots)
                except ReasonixError as err:
                    raise ToolError(f"{item_id}: {err}") from None
            items.append(FleetItem(item_id, spec, tuple(str(d) for d in deps), claim))
        plan = FleetPlan(tuple(items), bool(args.get("fail_fast")))
        preflight(plan)

        def run_item(item: FleetItem) -> tuple[bool, str, object]:
            outcome = self._run(item.spec, ctx)
            return outcome.ok, outcome.text, outcome

        return ToolResult(summary(run_fleet(plan, run_item)))

    def run_skill(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = str(args.get("name") or "").strip().split(" ", 1)[0].removeprefix("/")
        skill = self.skills.get(name)
        if skill is None:
            raise ToolError(f"no skill named {name!r}; skills: {', '.join(self.skills.names())}")
        if skill.model_disabled:  # Claude's disable-model-invocation: the user's to run
            raise ToolError(f"{name} is run only by the user (/{name}), not by the model")
        if args.get("file"):
            try:
                return ToolResult(read_resource(skill, str(args["file"])))
            except (ValueError, OSError) as err:
                raise ToolError(str(err)) from None
        text = str(args.get("arguments") or "").strip()
        if skill.run_as == "subagent":
            if not text:
                raise ToolError(f"{name} runs a sub-agent: put its whole task in `arguments`")
            profile = profile_from_skill(skill)
            spec = ProfileExecSpec(
                profile, TaskSpec(text), CapabilityGrant(read_only=profile.read_only),
                ContextRequest(), "run_skill",
            )  # fmt: skip
            return _result(self._run(spec, ctx))
        return ToolResult(render_skill(skill, text))

    def reads_only(self, args: dict[str, Any]) -> bool:
        """run_skill only reads when it loads an inline skill or a file, or runs a
        read-only profile (gated like ``read_only_task``)."""
        skill = self.skills.get(str(args.get("name") or ""))
        if skill is None:
            return False
        if skill.run_as != "subagent" or args.get("file"):
            return True
        return profile_from_skill(skill).read_only


def delegation_tools(prim: TaskTool | None, skills: SkillSet, names: list[str]) -> list[Any]:
    """The tools named in ``names`` (a subset of the five), wired to ``prim``."""
    entry = _Entry(prim, skills)
    read_only = READ_ONLY
    out: list[Any] = []
    for name in names:
        tool: Any = FunctionTool(
            name, DESCRIPTIONS[name], SCHEMAS[name], getattr(entry, name), name in read_only
        )
        if name == "run_skill":
            tool = _SkillTool(tool, entry)
        out.append(tool)
    return out


class _SkillTool:
    """run_skill with a per-call read-only hint (inline loads are reads)."""

    def __init__(self, inner: FunctionTool, entry: _Entry) -> None:
        self._inner, self._entry = inner, entry
        self.name, self.description = inner.name, inner.description
        self.schema, self.read_only = inner.schema, False
        self.metadata: dict[str, Any] = {}

    def execute(self, args_json: str, ctx: ToolContext) -> ToolResult:
        return self._inner.execute(args_json, ctx)

    def reads_only(self, args: dict[str, Any]) -> bool:
        return self._entry.reads_only(args)


def contract_tools() -> list[Any]:
    """The five tools without a live primitive, for the generated tool contract."""
    return delegation_tools(None, SkillSet(), list(SCHEMAS))
