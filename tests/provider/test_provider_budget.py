"""max_output_tokens semantics (PROV-11…15, D10) as tables."""

from __future__ import annotations

import pytest

from reasonix.errors import ProviderAPIError, classify
from reasonix.provider.budget import (
    ANTHROPIC_FALLBACK,
    is_context_overflow,
    learned_output_limit,
    needs_compaction,
    overflow_counts_output,
    resolve_max_tokens,
)

# The spec's literal (PROV-12/13, D10: "official DeepSeek 384K"), stated here rather
# than imported, so a wrong constant in the code fails these tables.
AUTO = 384 * 1024
DS = "api.deepseek.com"
OTHER = "llm.example.com"
W = 1_000_000

# (setting, kind, host, window, prompt, learned, trusted) -> wire value
CASES = [
    # official DeepSeek, automatic: omit while roomy, clip when tight (PROV-13)
    (0, "openai", DS, W, 10_000, None, False, None),
    (0, "responses", DS, W, W - AUTO, None, False, None),  # exactly fits
    (0, "openai", DS, W, W - AUTO + 1, None, False, AUTO - 1),
    (0, "openai", DS, W, 900_000, None, False, 100_000),
    # the Anthropic-compatible endpoint always sends (384K or the clipped value)
    (0, "anthropic", DS, W, 10_000, None, False, AUTO),
    (0, "anthropic", DS, W, 900_000, None, False, 100_000),
    # third party, automatic: nothing known -> omit; anthropic must send something
    (0, "openai", OTHER, 128_000, 120_000, None, False, None),
    (0, "anthropic", OTHER, 200_000, 190_000, None, False, ANTHROPIC_FALLBACK),
    # third party after a trusted overflow 400: never ask past the window (PROV-14)
    (0, "openai", OTHER, 128_000, 120_000, None, True, 8_000),
    (0, "anthropic", OTHER, 200_000, 190_000, None, True, 10_000),
    # a 400-learned limit is used from then on (D10)
    (0, "openai", OTHER, 128_000, 1_000, 8192, False, 8192),
    (0, "openai", DS, W, 10_000, 8192, False, 8192),
    (0, "openai", DS, W, W - 4_000, 8192, False, 4_000),
    # positive = a cost cap: clipped to the room, never raised (PROV-15)
    (32768, "openai", DS, W, 10_000, None, False, 32768),
    (32768, "openai", DS, W, W - 1_000, None, False, 1_000),
    (32768, "anthropic", DS, W, W - 1_000, None, False, 1_000),
    (32768, "openai", OTHER, 128_000, 127_000, None, False, 32768),  # shared window unknown
    (32768, "openai", OTHER, 128_000, 127_000, None, True, 1_000),
    (32768, "openai", OTHER, 128_000, 1_000, 16384, False, 16384),  # learned limit lowers it
    (1000, "openai", DS, W, 10_000, 16384, False, 1000),  # ... but never raises it
    # negative = omit on purpose; anthropic still has to send its automatic value
    (-1, "openai", DS, W, 900_000, None, False, None),
    (-1, "responses", OTHER, 128_000, 1_000, 8192, True, None),
    (-1, "anthropic", DS, W, 900_000, None, False, AUTO),
    # context_window 0 (unknown / disabled): no clipping possible
    (0, "openai", DS, 0, 10_000, None, False, None),
    (100, "openai", DS, 0, 10_000, None, False, 100),
    # a prompt already over the window still yields a positive value
    (0, "openai", DS, 1000, 5000, None, False, 1),
]


@pytest.mark.parametrize(
    ("setting", "kind", "host", "window", "prompt", "learned", "trusted", "want"), CASES
)
def test_resolve_max_tokens(
    setting: int,
    kind: str,
    host: str,
    window: int,
    prompt: int,
    learned: int | None,
    trusted: bool,
    want: int | None,
) -> None:
    got = resolve_max_tokens(
        setting,
        kind=kind,
        host=host,
        context_window=window,
        prompt_tokens=prompt,
        learned_limit=learned,
        shared_window_trusted=trusted,
    )
    assert got == want


@pytest.mark.parametrize(
    ("setting", "host", "window", "prompt", "trusted", "want"),
    [
        (0, DS, W, 10_000, False, False),
        (0, DS, W, 900_000, False, False),  # clipping is fine
        (-1, DS, W, 900_000, False, True),  # omitted on purpose and 384K does not fit
        (-1, DS, W, W - AUTO, False, False),
        (0, DS, W, W - 500, False, True),  # not even a useful answer fits
        (32768, OTHER, 128_000, 127_900, False, False),  # window not known to be shared
        (32768, OTHER, 128_000, 127_900, True, True),
        (0, DS, 0, 10_000, False, False),
    ],
)
def test_needs_compaction(
    setting: int, host: str, window: int, prompt: int, trusted: bool, want: bool
) -> None:
    got = needs_compaction(
        setting,
        host=host,
        context_window=window,
        prompt_tokens=prompt,
        shared_window_trusted=trusted,
    )
    assert got is want


def test_max_output_tokens_never_depends_on_the_setting_for_compaction_when_roomy() -> None:
    # PROV-11: the setting is an output ceiling, not an input to the trigger.
    for setting in (0, 1, 32768, 131072):
        assert not needs_compaction(setting, host=DS, context_window=W, prompt_tokens=100_000)


LIMIT_BODIES = [
    (
        '{"error":{"message":"max_tokens is too large: 100000. This model supports at most 16384 '
        'completion tokens, whereas you provided 100000.","type":"invalid_request_error"}}',
        16384,
    ),
    (
        '{"error":{"message":"Invalid max_tokens value, the valid range of max_tokens is '
        '[1, 8192]","type":"invalid_request_error"}}',
        8192,
    ),
    (
        '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 100000 > '
        '64000, which is the maximum allowed number of output tokens for claude-x"}}',
        64000,
    ),
    ('{"detail":"max_tokens must be at most 4096"}', 4096),
    ('{"error":"\'max_output_tokens\' must be less than or equal to `32768`"}', 32768),
    ('{"error":{"message":"The maximum output tokens is 65536"}}', 65536),
    ('{"error":{"message":"model not found"}}', None),
    ('{"error":{"message":"This model\'s maximum context length is 131072 tokens"}}', None),
    ("", None),
]


@pytest.mark.parametrize(("body", "want"), LIMIT_BODIES)
def test_learned_output_limit(body: str, want: int | None) -> None:
    assert learned_output_limit(body) == want


OVERFLOW = (
    '{"error":{"message":"This model\'s maximum context length is 131072 tokens. However, you '
    "requested 140000 tokens (130000 in the messages, 10000 in the completion). Please reduce "
    'the length of the messages or completion.","type":"invalid_request_error"}}'
)


def test_context_overflow_classifier() -> None:
    assert is_context_overflow(400, OVERFLOW)
    assert overflow_counts_output(OVERFLOW)
    anth = '{"type":"error","error":{"message":"prompt is too long: 210000 tokens > 200000"}}'
    assert is_context_overflow(400, anth) and not overflow_counts_output(anth)
    assert is_context_overflow(400, '{"error":{"message":"Your input exceeds the context window"}}')
    assert not is_context_overflow(400, LIMIT_BODIES[0][0])
    assert not is_context_overflow(500, OVERFLOW)
    err = ProviderAPIError(400, "x", body=OVERFLOW)
    assert classify(err) == "context.exhausted"
