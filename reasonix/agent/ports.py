"""The interfaces the loop depends on, as Protocols in one place.

The agent layer may import the permission layer and its own context
manager, but the loop only needs these small surfaces; tests pass simple
objects that satisfy them.

:class:`ChildFactory` is the port through which the sub-agent spawn primitive
(``agent/subagent/spawn.py``) gets a fresh runtime: boot implements it by
calling ``build_runtime(RuntimeOptions(child=request))``, so a child is "a
runtime with these options" while the import arrows keep pointing down.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from reasonix.cancel import Cancel
from reasonix.provider.types import Message

if TYPE_CHECKING:
    from typing import Any

    from .events import Runner
    from .subagent.request import ChildRequest

__all__ = ["ChildFactory", "ChildRuntime", "ContextLike", "GateLike"]


class GateLike(Protocol):
    """The permission gate as the agent uses it (reasonix.permission.Gate)."""

    def check(
        self,
        tool_name: str,
        read_only: bool,
        args: dict[str, Any],
        *,
        self_gated: bool = False,
        hook_allow: bool = False,
    ) -> Any:
        """An outcome with ``allowed`` (bool), ``message`` (str) and ``decision``.

        ``self_gated`` is passed only for tools that approve themselves
        (``metadata["self_gated"]``, the memory writers). ``hook_allow``: a PreToolUse
        hook said "allow", which replaces an ordinary prompt but never a fresh one.
        """
        ...


class ContextLike(Protocol):
    """What the loop uses of reasonix.agent.context.ContextManager."""

    def admit(self, message: Message) -> None:
        """Raise InputTooLarge for a new message that can never fit the window."""
        ...

    def prepare(self, cancel: Cancel, pending: Sequence[Message] = ()) -> list[Message]:
        """The messages of the next request (``pending`` last), after any needed maintenance."""
        ...

    def on_overflow(
        self, cancel: Cancel, error: Any = None, pending: Sequence[Message] = ()
    ) -> list[Message]:
        """The messages for the single retry after a context-overflow error."""
        ...

    def estimate(self, pending: Sequence[Message] = ()) -> int:
        """Estimated prompt tokens of the current projection plus ``pending``."""
        ...

    def observe_usage(self, prompt_tokens: int, sent: Sequence[Message] | None = None) -> None:
        """Feed back the provider's reported prompt size."""
        ...

    def compact(self, cancel: Cancel, *, force: bool = True) -> Any:
        """Manual maintenance (``--compact``); returns what it did."""
        ...


class ChildRuntime(Protocol):
    """What the spawn primitive uses of a child runtime (a ``reasonix.boot.Runtime``)."""

    @property
    def runner(self) -> Runner:
        """The child's Runner; the primitive consumes its events."""
        ...

    session: Any  # .id, .path of the child's transcript
    registry: Any  # the child's tool Registry (names, schemas)
    resolved: Any  # .ref of the model the child runs
    narrowed: list[str]  # what narrowing removed ("tool: why")

    @property
    def telemetry(self) -> Any:
        """The child's own request usage and counters."""
        ...

    def close(self) -> None:
        """Release the child's session (and remove an ephemeral transcript)."""
        ...


class ChildFactory(Protocol):
    """Builds a child runtime for a resolved request (implemented in boot)."""

    def __call__(self, request: ChildRequest) -> ChildRuntime:
        """A ready child; raises ConfigError/SessionError like ``build_runtime``."""
        ...
