"""reasonix.digest and reasonix.charsets: the same answers as the stdlib they stand in for."""

from __future__ import annotations

import hashlib
import string

from hypothesis import given
from hypothesis import strategies as st

from reasonix import charsets, digest


def test_the_character_sets_match_the_string_module() -> None:
    assert string.ascii_letters == charsets.ASCII_LETTERS
    assert string.digits == charsets.ASCII_DIGITS
    assert string.ascii_letters + string.digits == charsets.ASCII_ALNUM


@given(st.binary(max_size=300))
def test_small_digests_match_hashlib(data: bytes) -> None:
    assert digest.sha1_hex(data) == hashlib.sha1(data).hexdigest()
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_digests_on_both_sides_of_the_size_switch() -> None:
    for size in (0, digest.SMALL - 1, digest.SMALL, digest.SMALL + 1, 3 * digest.SMALL):
        data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        assert digest.sha1_hex(data) == hashlib.sha1(data).hexdigest(), size
        assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest(), size


def test_small_data_is_hashed_without_openssl() -> None:
    # this interpreter has the built-in hashes: they are what small data gets
    assert digest._builtin("sha1").__module__ == "_sha1"
    assert digest._builtin("sha256").__module__ in ("_sha2", "_sha256")
