"""Checking the params of incoming ACP requests: wrong shapes are ``-32602``, never a crash.

The schema is the contract (``schema/v1/schema.json`` of the protocol); these
helpers check what a handler reads and name the offending field.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .rpc import INVALID_PARAMS, RpcError

if TYPE_CHECKING:
    from typing import Any

__all__ = ["absolute_path", "as_object", "opt_list", "opt_object", "opt_str", "req_str"]


def _bad(message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"invalid params: {message}")


def as_object(params: Any) -> dict[str, Any]:
    """The params object (ACP uses named params only)."""
    if not isinstance(params, dict):
        raise _bad("expected an object")
    return params


def req_str(params: dict[str, Any], key: str) -> str:
    """A required string field."""
    value = params.get(key)
    if not isinstance(value, str):
        raise _bad(f"{key} must be a string")
    return value


def opt_str(params: dict[str, Any], key: str, default: str = "") -> str:
    """An optional string field (null counts as absent)."""
    value = params.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise _bad(f"{key} must be a string")
    return value


def opt_list(params: dict[str, Any], key: str) -> list[Any]:
    """An optional array field (null or absent: empty)."""
    value = params.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _bad(f"{key} must be an array")
    return value


def opt_object(params: dict[str, Any], key: str) -> dict[str, Any]:
    """An optional object field (null or absent: empty)."""
    value = params.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(f"{key} must be an object")
    return value


def absolute_path(params: dict[str, Any], key: str) -> str:
    """A required absolute path (the protocol sends only absolute paths)."""
    value = req_str(params, key)
    if "\x00" in value or not os.path.isabs(value):
        raise _bad(f"{key} must be an absolute path")
    return value
