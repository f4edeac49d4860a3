"""Shared pytest setup: make ``tests/`` importable (for ``fakes``) and isolate HOME."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point REASONIX_HOME/STATE at fresh dirs so no test reads the real user config."""
    saved = {
        k: os.environ.get(k)
        for k in ("REASONIX_HOME", "REASONIX_STATE_HOME", "REASONIX_CACHE_HOME")
    }
    home = tmp_path_factory.mktemp("rxhome")
    os.environ["REASONIX_HOME"] = str(home)
    os.environ.pop("REASONIX_STATE_HOME", None)
    os.environ.pop("REASONIX_CACHE_HOME", None)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
