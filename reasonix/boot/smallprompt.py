"""A small prompt for a small context window (issue 37, item 4).

Against an 8,192-token window the full fixed prompt (system prompt, ~30 tool
schemas, instruction files) takes most of the room before the user's first
word. When a session starts against an effective window of at most
:data:`SMALL_WINDOW` tokens (configured, or served as the start-up probe
found), its fixed prompt is held to :data:`FIXED_SHARE` of the window:

* the core built-ins (:data:`CORE_TOOLS`, in that order of priority, each in a
  short form: the first sentence of its description and of each parameter's)
  are in the tool list while they fit; every other tool is reached through
  ``use_capability`` (``search`` ranks them with BM25, ``call`` runs one by
  name, ``inspect`` gives the full schema; a direct call by name works too);
* instruction files that would not fit are named (path and size) with
  "read it with read_file" instead of included.

The choice is made once, when the session's tool list is pinned
(agent/toolpin.py, ``"small": true``): a resumed session keeps it, whatever
window the resuming run finds, so every request extends the previous one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.agent.instructions import InstructionFile, reference_block
from reasonix.agent.toolpin import TOOLS, pin_tools, pinned_record
from reasonix.agent.window import ContextWindow
from reasonix.lazy import dataclass
from reasonix.tool import Registry

if TYPE_CHECKING:
    from typing import Any

    from reasonix.agent.session import Session
    from reasonix.provider.types import ToolSchema

__all__ = ["CORE_TOOLS", "FIXED_SHARE", "SMALL_WINDOW", "Offer", "is_small", "session_tools"]

SMALL_WINDOW = 16 * 1024  # tokens: at or below, a new session gets the small prompt
FIXED_SHARE = 0.25  # of the window: what the fixed prompt may take in a small window
CORE_TOOLS = ("read_file", "edit_file", "write_file", "bash", "grep", "glob", "ls")
PROXY = "use_capability"


@dataclass(frozen=True)
class Offer:
    """What a session sends: its tool schemas, first-turn instructions and a notice."""

    tools: list[dict[str, Any]]
    instructions: str
    small: bool = False
    note: str = ""
    fixed_tokens: int = 0


def is_small(window: int) -> bool:
    """Whether a window (tokens, 0 = unknown) gets the small prompt."""
    return 0 < window <= SMALL_WINDOW


def _first_sentence(text: str) -> str:
    text = text.strip()
    cut = len(text)
    for mark in (". ", ".\n", "\n"):
        at = text.find(mark)
        if at >= 0:
            cut = min(cut, at + 1)
    return text[:cut].strip()


OPTIONAL_WORDS = 60  # characters of an optional parameter's description in the short form


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " ..."


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A core tool's short form: the same parameters, shorter words.

    The tool's description and each required parameter's are cut to their first
    sentence, an optional parameter's to about :data:`OPTIONAL_WORDS` characters.
    The parameters stay whole so every call the full schema allows still
    validates; ``use_capability`` ``inspect`` gives the full text.
    """
    params = dict(schema["parameters"])
    props = params.get("properties")
    required = set(params.get("required") or ())
    if isinstance(props, dict):
        short = {}
        for name, prop in props.items():
            if isinstance(prop, dict) and isinstance(prop.get("description"), str):
                words = _first_sentence(prop["description"])
                if name not in required:
                    words = _clip(words, OPTIONAL_WORDS)
                prop = {**prop, "description": words}
            short[name] = prop
        params["properties"] = short
    return {
        "name": schema["name"],
        "description": _first_sentence(str(schema["description"])),
        "parameters": params,
    }


def small_offer(
    registry: Registry,
    window: int,
    system: str,
    instructions: str,
    files: list[InstructionFile],
    skill_index: str = "",
) -> Offer | None:
    """The small prompt for ``window`` tokens; None when the registry has no proxy to
    reach the other tools through (then every tool stays in the list)."""
    from reasonix.agent.tokens import estimate_text, estimate_tools

    proxy = registry.get(PROXY)
    small_schema = getattr(proxy, "small_schema", None)
    if not callable(small_schema):
        return None
    budget = int(window * FIXED_SHARE)
    tools: list[dict[str, Any]] = [small_schema()]
    tokens = estimate_text(system) + estimate_tools(tools) + estimate_text(skill_index)
    for name in CORE_TOOLS:  # in order of priority, each while it fits
        tool = registry.get(name)
        if tool is None:
            continue
        short = compact_schema(
            {"name": tool.name, "description": tool.description, "parameters": tool.schema}
        )
        cost = estimate_tools([short])
        if tokens + cost <= budget:
            tools.append(short)
            tokens += cost
    tools.sort(key=lambda t: str(t["name"]))  # the registry's order
    full = estimate_text(instructions) if instructions else 0
    named = False
    if instructions and tokens + full > budget:
        instructions, named = reference_block(files), True
        full = estimate_text(instructions)
    tokens += full
    behind = len(registry) - len(tools)
    note = (
        f"the model's window is {window} tokens: this session offers {len(tools) - 1} core "
        f"tools directly and the other {behind} through use_capability (search)"
        + (", and names the instruction files instead of including them" if named else "")
        + f"; the fixed prompt is about {tokens} tokens"
    )
    return Offer(tools, instructions, True, note, tokens)


def session_tools(rt: Any, session: Session, system: str) -> tuple[list[ToolSchema], str, str]:
    """The pinned tool schemas of ``session``, a notice, and its first-turn instructions
    (``rt``: the boot Runtime building the session's agent).

    Decides once per session: a session with a ``tools`` record keeps what it
    recorded (small or not); a new one waits for the window probe (the first
    request would wait for it anyway) and takes the small prompt when the
    effective window is small. A window learned later that is small switches
    the session once (:func:`_switch_on_shrink`).
    """
    registry, window, instructions = rt.registry, rt.window, rt.instructions
    files, skills = rt.instruction_files, rt.skill_index
    _watch(rt, window)
    rec = pinned_record(session)
    small = bool(rec.get("small")) if rec is not None else None
    offer = None
    if small is None:
        window.settle()
        if is_small(window.limit):
            offer = small_offer(registry, window.limit, system, instructions, files, skills)
    elif small:  # same files, same window: the same first turn as when it was decided
        size = window.limit or SMALL_WINDOW
        offer = small_offer(registry, size, system, instructions, files, skills)
    if offer is None:
        _reach_builtins(registry, None)
        tools, note = pin_tools(session, registry.schemas())
        return tools, note, instructions
    tools, _ = pin_tools(session, offer.tools, small=True)
    _reach_builtins(registry, {t.name for t in tools})
    note = offer.note if small is None else ""
    return tools, note, offer.instructions


def _watch(rt: Any, window: ContextWindow) -> None:
    """Listen once per window for a shrink that makes it small."""
    if any(getattr(f, "small_prompt", False) for f in window.on_shrink):
        return

    def shrank(limit: int) -> None:
        _switch_on_shrink(rt, limit)

    shrank.small_prompt = True  # type: ignore[attr-defined]
    window.on_shrink.append(shrank)


def _switch_on_shrink(rt: Any, limit: int) -> None:
    """A window learned mid-session (a refusal, a late probe answer) that is small:
    the session switches to the small tool list once, from the next request on.

    The refused request was not cached, and a refusal compacts the history
    anyway, so what this rewrites costs little next to a session that could no
    longer take a message. The first turn's instructions, already sent, stay.
    """
    from reasonix.provider.types import ToolSchema

    agent, session = getattr(rt, "agent", None), rt.session  # None: still being built
    rec = pinned_record(session)
    if agent is None or agent.context is None or not is_small(limit) or rec is None:
        return
    if rec.get("small"):
        return
    system = agent.system
    offer = small_offer(rt.registry, limit, system, rt.instructions, rt.instruction_files)
    if offer is None:
        return
    session.append({"type": TOOLS, "tools": offer.tools, "small": True})
    schemas = [ToolSchema(**t) for t in offer.tools]
    # in place: the request being retried holds the agent's list
    agent.tools[:] = schemas
    agent.context.tools[:] = schemas
    _reach_builtins(rt.registry, {t.name for t in schemas})
    rt.window.tell(
        f"the model's window is {limit} tokens: from the next request on this session offers "
        f"{len(schemas) - 1} core tools directly and the others through use_capability (search)"
    )


def _reach_builtins(registry: Registry, offered: set[str] | None) -> None:
    """Let ``use_capability`` reach the built-ins not in the session's list (None: none)."""
    proxy = registry.get(PROXY)
    offer = getattr(proxy, "offer_builtins", None)
    if not callable(offer):
        return
    if offered is None:
        offer(tuple)
        return
    from reasonix.plugin.mcp.catalog import ToolSearch

    from .plugins import bm25_ranker

    def behind() -> list[Any]:
        return [
            t
            for t in registry.tools()
            if t.name not in offered and t.name != PROXY and not t.name.startswith("mcp__")
        ]

    offer(behind, ToolSearch(bm25_ranker))
