"""Context overflows in every dialect, through the real providers against the fakes.

Each recorded refusal in ``fakes.dialects`` must reach the caller as a
ProviderAPIError that is a context overflow, that ``errors.classify`` calls
``context.exhausted``, and whose window and prompt size ``overflow_facts``
reads back. Ordinary refusals that mention tokens must stay what they are.
"""

from __future__ import annotations

import pytest
from fakes import FakeServer, Fault, dialects

import reasonix.provider.anthropic
import reasonix.provider.openai  # noqa: F401 - registers the kind
from reasonix import provider as registry
from reasonix.cancel import Cancel
from reasonix.config.model import ProviderConfig
from reasonix.errors import InputTooLarge, ProviderAPIError, ProviderStreamError, classify
from reasonix.provider.overflow import overflow_facts
from reasonix.provider.types import Message, Request, Role

WINDOW, PROMPT = 8192, 13914


def _refusal(kind: str, fault: Fault) -> ProviderAPIError:
    with FakeServer(kind, [fault]) as srv:
        cfg = ProviderConfig(name="local", kind=kind, base_url=srv.url, models=["m"])
        prov = registry.new(kind, cfg)
        req = Request(model="m", messages=[Message(Role.USER, "hello")], max_tokens=100)
        with pytest.raises(ProviderAPIError) as err:
            list(prov.stream(req, Cancel()))
    return err.value


CASES = [("openai", name) for name in dialects.OVERFLOWS if name != "anthropic"]
CASES += [("anthropic", "anthropic"), ("anthropic", "llama.cpp")]  # llama.cpp serves /v1/messages


@pytest.mark.parametrize(("kind", "dialect"), CASES)
def test_every_dialect_is_an_overflow_that_names_its_numbers(kind: str, dialect: str) -> None:
    err = _refusal(kind, dialects.OVERFLOWS[dialect](WINDOW, PROMPT))
    assert err.is_context_overflow, err
    assert classify(err) == "context.exhausted"
    facts = overflow_facts(f"{err.vendor_message} {err.body}")
    if dialect in dialects.NAMES_NO_NUMBERS:
        assert facts.window is None
    else:
        assert facts.window == WINDOW
        assert facts.prompt == PROMPT


def test_an_in_stream_error_that_is_not_an_overflow_stays_a_stream_error() -> None:
    event = 'event: error\ndata: {"error": {"message": "model crashed"}}\n\n'
    with FakeServer("openai", [Fault.sse(event)]) as srv:
        cfg = ProviderConfig(name="local", kind="openai", base_url=srv.url, models=["m"])
        req = Request(model="m", messages=[Message(Role.USER, "hi")])
        with pytest.raises(ProviderStreamError, match="model crashed"):
            list(registry.new("openai", cfg).stream(req, Cancel()))


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (429, '{"error":{"message":"Too many tokens in the last minute, slow down"}}'),
        (
            413,
            '{"error":{"message":"Request too large for model in organization on tokens per '
            'minute (TPM): Limit 6000, Requested 9000","code":"rate_limit_exceeded"}}',
        ),
        (
            500,
            '{"error":{"message":"failed to load the model: the maximum context length is '
            'not available","type":"server_error"}}',
        ),
        (
            400,
            '{"error":{"message":"max_tokens is too large: 128000. This model supports at most '
            '16384 completion tokens, whereas you provided 128000."}}',
        ),
        (
            400,
            '{"error":{"message":"Invalid \'messages[3].content\': string too long. Expected '
            'a string with maximum length 1048576","code":"string_above_max_length"}}',
        ),
        (401, '{"error":{"message":"Incorrect API key provided"}}'),
    ],
)
def test_other_refusals_are_not_overflows(status: int, body: str) -> None:
    err = ProviderAPIError(status, "", body=body)
    assert not err.is_context_overflow
    assert classify(err) != "context.exhausted"


WORDINGS = [
    ("input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000", 200000, 188240),
    (
        "This model's maximum prompt length is 131072 but the request contains 150000 tokens.",
        131072,
        150000,
    ),
    ("Request too long: 121692 input tokens over the limit of 46112", 46112, 121692),
    ("Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)", 7424, 15028),
    ("Reached context length of 4096 tokens with model (arch: qwen3vlmoe)", 4096, None),
    (
        "The input token count (1043256) exceeds the maximum number of tokens allowed (1048576).",
        1048576,
        1043256,
    ),
    (
        "Prompt contains 10000 tokens and 0 draft tokens, too large for model with 8192 "
        "maximum context length",
        8192,
        10000,
    ),
    ("the request exceeds the available context size, try increasing it", None, None),
    ("context length 12 exceeded", None, None),  # 12 is no window
]


@pytest.mark.parametrize(("text", "window", "prompt"), WORDINGS)
def test_overflow_facts_read_the_wordings(
    text: str, window: int | None, prompt: int | None
) -> None:
    facts = overflow_facts(text)
    assert (facts.window, facts.prompt) == (window, prompt)


def test_input_too_large_is_context_exhausted() -> None:
    err = InputTooLarge("context: your message is about 20000 tokens", tokens=20000, window=8192)
    assert classify(err) == "context.exhausted"
    assert (err.tokens, err.window) == (20000, 8192)
