"""What one delegation asks for, as four independent concepts plus the compiled spec.

Spec §3.10 / SUB-7: a field belongs to whoever decides its value.

* :class:`~.profile.Profile` — how the worker thinks (its own module);
* :class:`TaskSpec` — what this call wants: the prompt, a model/effort for
  this call, a step budget and a spend budget (:class:`~.allowance.Allowance`);
* :class:`CapabilityGrant` — what it may touch: read-only or a write claim;
* :class:`ContextRequest` — what it starts from besides its task (only an
  explicit prior child transcript) and whether its transcript persists;
* :class:`SchedulerPolicy` — when and how children run (the session limits).

:class:`ProfileExecSpec` is what every entry point compiles its request to
(SUB-25). Dependencies between fleet items are a property of the fleet plan
and never appear here (SUB-22). The :class:`~.capsule.ContextCapsule` records
the context a run actually started from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.errors import ConfigError
from reasonix.lazy import dataclass

from .profile import Profile

if TYPE_CHECKING:  # loaded with the spawn code, not on the first request's path
    from .allowance import Allowance

__all__ = [
    "ENTRY_POINTS",
    "CapabilityGrant",
    "ContextRequest",
    "ProfileExecSpec",
    "SchedulerPolicy",
    "TaskSpec",
    "check_limits",
]

# Every entry point that may spawn a child (SUB-25); the spec names the one it came from.
ENTRY_POINTS = (
    "task", "read_only_task", "parallel_tasks", "fleet", "run_skill", "command",
    "cli_run", "cli_try",
)  # fmt: skip


@dataclass(frozen=True)
class TaskSpec:
    """What this call wants."""

    prompt: str
    model: str = ""  # this call's model (SUB-6: after the per-profile config entry)
    effort: str = ""
    max_steps: int = 0  # 0: the configured budget
    label: str = ""  # a fleet item's id, for receipts and listings
    # this call's own budget (issue 36); None or unset measures: [agent] subagent_max_*
    allowance: Allowance | None = None


@dataclass(frozen=True)
class CapabilityGrant:
    """What the run may touch.

    ``read_only`` gives the strictly read-only registry. Otherwise the child is
    a writer: ``write_paths`` None claims the whole workspace (serialised
    against every other writer, SUB-17); a tuple binds its path-aware writers
    to those paths (SUB-12).
    """

    read_only: bool = False
    write_paths: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ContextRequest:
    """What the child starts from besides its task, and whether its transcript stays.

    ``ephemeral``: the transcript is not kept (``reasonix subagent try``).
    ``continue_from``: a prior child transcript id to continue in place;
    ``fork_from``: one to copy and continue, leaving the source untouched. They
    are the only ways an earlier conversation reaches a child (SUB-18).
    """

    ephemeral: bool = False
    continue_from: str = ""
    fork_from: str = ""


@dataclass(frozen=True)
class SchedulerPolicy:
    """The session scheduler's limits (SUB-5): 1–32 each, writers ≤ total."""

    max_concurrency: int = 6
    max_writers: int = 3

    def __post_init__(self) -> None:
        check_limits(self.max_concurrency, self.max_writers)


def check_limits(max_concurrency: int, max_writers: int) -> None:
    """Raise ConfigError unless the limits make a :class:`SchedulerPolicy` (1–32 each,
    writers ≤ total). A run checks its config with this at start, before any request;
    the policy itself is made when a sub-agent is first spawned."""
    for key, value in (
        ("agent.max_subagent_concurrency", max_concurrency),
        ("agent.max_parallel_writers", max_writers),
    ):
        if not 1 <= value <= 32:
            raise ConfigError(f"expected 1–32, got {value}", key=key)
    if max_writers > max_concurrency:
        raise ConfigError(
            f"{max_writers} writers exceed max_subagent_concurrency "
            f"{max_concurrency}; writers must be ≤ the total",
            key="agent.max_parallel_writers",
        )


@dataclass(frozen=True)
class ProfileExecSpec:
    """One compiled delegation: the only input of ``TaskTool.run_profile_spec``."""

    profile: Profile | None  # None: the default task prompt
    task: TaskSpec
    grant: CapabilityGrant
    context: ContextRequest
    entry: str  # one of ENTRY_POINTS

    @property
    def read_only(self) -> bool:
        """True when the grant or the profile's ceiling makes the child read-only."""
        return self.grant.read_only or bool(self.profile and self.profile.read_only)
