"""The one composition root (DESIGN §2): typed options -> a ready runtime.

``build_runtime(RuntimeOptions(...))`` is the single call every frontend and
every sub-agent spawn makes; see :mod:`reasonix.boot.runtime`.
"""

from __future__ import annotations

from .options import ABLATE_ARMS, PERMISSION_MODES, RuntimeOptions
from .runtime import Runtime, build_runtime

__all__ = ["ABLATE_ARMS", "PERMISSION_MODES", "Runtime", "RuntimeOptions", "build_runtime"]
