"""Provider registry and protocol.

Built-in kinds live in sub-packages (``reasonix.provider.openai`` …) that call
:func:`register` when imported; this module never imports them (ARCH-3).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from reasonix.cancel import Cancel
from reasonix.errors import ConfigError
from reasonix.provider.types import Chunk, Request

if TYPE_CHECKING:
    from typing import Any

__all__ = ["Provider", "kinds", "new", "register"]


class Provider(Protocol):
    """A model endpoint that streams chunks for a request."""

    name: str

    def stream(self, request: Request, cancel: Cancel) -> Iterator[Chunk]:
        """Yield chunks; errors before streaming starts are raised from here."""
        ...


if TYPE_CHECKING:
    ProviderFactory = Callable[[Any], Provider]

_lock = threading.Lock()
_factories: dict[str, ProviderFactory] = {}


def register(kind: str, factory: ProviderFactory) -> None:
    """Make ``kind`` constructible through :func:`new`."""
    with _lock:
        _factories[kind] = factory


def kinds() -> list[str]:
    """Registered kind names, sorted."""
    with _lock:
        return sorted(_factories)


def new(kind: str, cfg: Any) -> Provider:
    """Build a provider of ``kind`` from a resolved provider config."""
    with _lock:
        factory = _factories.get(kind)
    if factory is None:
        known = ", ".join(kinds()) or "none registered"
        raise ConfigError(f"unknown provider kind {kind!r} (known: {known})", key="kind")
    return factory(cfg)
