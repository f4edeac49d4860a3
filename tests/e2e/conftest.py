"""Fixtures for tests that run the built dist/reasonix.pyz as a subprocess."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from e2e_python import MINORS, find_python, interpreter

ROOT = Path(__file__).resolve().parents[2]
PYZ = ROOT / "dist" / "reasonix.pyz"


@pytest.fixture(scope="session")
def pyz() -> Path:
    """The built archive; CI builds it before running tests/e2e."""
    if not PYZ.is_file():
        if os.environ.get("CI"):
            pytest.fail("dist/reasonix.pyz is missing: run `python build_zipapp.py` first")
        pytest.skip("dist/reasonix.pyz not built (run `make build`)")
    return PYZ


__all__ = ["MINORS", "PYZ", "ROOT", "find_python", "interpreter"]
