"""Errors by meaning, not status (issue 33, Deliver 4).

Quota, billing, a refused key, an unknown model and a content policy are
permanent: one request, no retry, one line with the vendor's type and message
and what to do, ``classify`` -> ``provider.rejected``. Only overload, rate
limits, 5xx and connection drops are retried. Every body below is the
vendor's documented shape (source beside each case); they are served by the
loopback fakes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, Fault, Turn
from fakes.script import Step
from provider_kit import Sleeps, client, collect, provider, request, text
from traffic_kit import Case, replay

from reasonix.errors import ProviderAPIError, classify
from reasonix.provider.ratelimit import rate_limit_reset


def _openai(message: str, typ: str, code: str | None, param: str | None = None) -> str:
    return json.dumps({"error": {"message": message, "type": typ, "param": param, "code": code}})


def _anthropic(typ: str, message: str, **extra: Any) -> str:
    return json.dumps({"type": "error", "error": {"type": typ, "message": message, **extra}})


QUOTA_429 = _openai(
    "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, read the docs: "
    "https://platform.openai.com/docs/guides/error-codes/api-errors.",
    "insufficient_quota",
    "insufficient_quota",
)

# (id, kind, status, body, meaning) — permanent refusals; source of each shape in the comment
PERMANENT = [
    # OpenAI error codes guide; github.com/mattvr/ShellGPT/issues/23 (verbatim body)
    ("openai-insufficient-quota-429", "openai", 429, QUOTA_429, "quota"),
    # OpenAI 400 "Billing hard limit has been reached" (github.com/all-in-aigc/aiwallpaper/issues/2)
    (
        "openai-billing-hard-limit",
        "openai",
        400,
        _openai(
            "Billing hard limit has been reached",
            "invalid_request_error",
            "billing_hard_limit_reached",
        ),
        "quota",
    ),
    # OpenAI error codes guide: 401 Incorrect API key provided
    (
        "openai-invalid-api-key",
        "openai",
        401,
        _openai(
            "Incorrect API key provided: sk-vendo****test. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            "invalid_api_key",
        ),
        "auth",
    ),
    # OpenAI 404 model_not_found
    (
        "openai-model-not-found",
        "openai",
        404,
        _openai(
            "The model `gpt-9` does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
        ),
        "model",
    ),
    # OpenAI safety system refusal (content_policy_violation)
    (
        "openai-content-policy",
        "openai",
        400,
        _openai(
            "Your request was rejected as a result of our safety system.",
            "invalid_request_error",
            "content_policy_violation",
        ),
        "policy",
    ),
    # docs.claude.com/en/api/errors: 401 authentication_error
    (
        "anthropic-authentication",
        "anthropic",
        401,
        _anthropic("authentication_error", "invalid x-api-key"),
        "auth",
    ),
    # Anthropic: a 400 when the prepaid credit is gone
    (
        "anthropic-credit-too-low",
        "anthropic",
        400,
        _anthropic(
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & "
            "Billing to upgrade or purchase credits.",
        ),
        "quota",
    ),
    # Anthropic: the monthly spend limit is a 429 rate_limit_error whose
    # error.details.error_code is enforced_spend_limit_reached (no retry-after)
    (
        "anthropic-spend-limit-429",
        "anthropic",
        429,
        _anthropic(
            "rate_limit_error",
            "You have reached your specified API usage limits.",
            details={"error_code": "enforced_spend_limit_reached"},
        ),
        "quota",
    ),
    # docs.claude.com/en/api/errors: 404 not_found_error naming the model
    (
        "anthropic-model-not-found",
        "anthropic",
        404,
        _anthropic("not_found_error", "model: claude-nonexistent"),
        "model",
    ),
    # api-docs.deepseek.com/quick_start/error_codes: 402 Insufficient Balance
    (
        "deepseek-insufficient-balance",
        "openai",
        402,
        _openai("Insufficient Balance", "unknown_error", "invalid_request_error"),
        "quota",
    ),
    # DeepSeek 401 Authentication Fails
    (
        "deepseek-authentication",
        "openai",
        401,
        _openai(
            "Authentication Fails, Your api key: ****test is invalid",
            "authentication_error",
            "invalid_request_error",
        ),
        "auth",
    ),
    # openrouter.ai/docs/api-reference/errors: 402 insufficient credits (numeric code)
    (
        "openrouter-insufficient-credits",
        "openai",
        402,
        json.dumps(
            {
                "error": {
                    "code": 402,
                    "message": "Insufficient credits. Add more using "
                    "https://openrouter.ai/settings/credits",
                }
            }
        ),
        "quota",
    ),
    # OpenRouter 403 moderation: metadata.reasons / flagged_input
    (
        "openrouter-moderation",
        "openai",
        403,
        json.dumps(
            {
                "error": {
                    "code": 403,
                    "message": "openai/gpt-4o requires moderation on OpenRouter. Your input was "
                    'flagged for "harassment".',
                    "metadata": {
                        "reasons": ["harassment"],
                        "flagged_input": "...",
                        "provider_name": "OpenAI",
                        "model_slug": "openai/gpt-4o",
                    },
                }
            }
        ),
        "policy",
    ),
]

# (id, kind, status, body, headers) — retried, then the answer comes
TRANSIENT = [
    # docs.claude.com/en/api/errors: 529 overloaded_error
    (
        "anthropic-overloaded-529",
        "anthropic",
        529,
        _anthropic("overloaded_error", "Overloaded"),
        {},
    ),
    # Anthropic 429 rate_limit_error with retry-after
    (
        "anthropic-rate-limit",
        "anthropic",
        429,
        _anthropic(
            "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"
        ),
        {"retry-after": "0"},
    ),
    # OpenAI 429 rate_limit_exceeded with the x-ratelimit reset headers (no Retry-After)
    (
        "openai-rate-limit-reset-headers",
        "openai",
        429,
        _openai(
            "Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): "
            "Limit 3, Used 3, Requested 1. Please try again in 20ms.",
            "requests",
            "rate_limit_exceeded",
        ),
        {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20ms"},
    ),
    # DeepSeek 503 Server Overloaded
    (
        "deepseek-overloaded-503",
        "openai",
        503,
        _openai("Server Overloaded", "server_error", None),
        {},
    ),
    # OpenRouter 502: the chosen model is down
    (
        "openrouter-502",
        "openai",
        502,
        json.dumps({"error": {"code": 502, "message": "Provider returned error"}}),
        {},
    ),
]


@pytest.mark.parametrize(("kind", "status", "body", "meaning"), [p[1:] for p in PERMANENT],
                         ids=[p[0] for p in PERMANENT])  # fmt: skip
def test_permanent_refusals_are_not_retried(
    kind: str, status: int, body: str, meaning: str
) -> None:
    sleeps = Sleeps()
    with FakeServer(kind, [Fault.status(status, body=body), Turn(text="never")]) as srv:
        with pytest.raises(ProviderAPIError) as info:
            collect(provider(kind, srv.url, http=client(sleeps)), request())
        assert len(srv.requests) == 1
    err = info.value
    assert sleeps.delays == []
    assert err.meaning == meaning and err.is_permanent
    assert classify(err) == "provider.rejected"
    line = str(err)
    assert "\n" not in line and f"HTTP {status}" in line
    message = json.loads(body)["error"]["message"]
    assert message.split(".")[0] in line  # the vendor's own words
    assert "not retried" in line  # and what to do


@pytest.mark.parametrize(("kind", "status", "body", "headers"), [t[1:] for t in TRANSIENT],
                         ids=[t[0] for t in TRANSIENT])  # fmt: skip
def test_overload_rate_limits_and_5xx_are_retried(
    kind: str, status: int, body: str, headers: dict[str, str]
) -> None:
    sleeps = Sleeps()
    script: list[Step] = [Fault.status(status, body=body, headers=headers), Turn(text="second try")]
    with FakeServer(kind, script) as srv:
        got = collect(provider(kind, srv.url, http=client(sleeps)), request())
        assert len(srv.requests) == 2
    assert text(got) == "second try"
    assert len(sleeps.delays) == 1
    err = ProviderAPIError(status, "x", body=body)
    assert not err.is_permanent and classify(err) == "provider.transient"


def test_reset_header_sets_the_wait() -> None:
    sleeps = Sleeps()
    headers = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "1.5s",
        "x-ratelimit-remaining-tokens": "9000",
        "x-ratelimit-reset-tokens": "6m0s",
    }
    body = _openai("slow down", "requests", "rate_limit_exceeded")
    script: list[Step] = [Fault.status(429, body=body, headers=headers), Turn(text="ok")]
    with FakeServer("openai", script) as srv:
        collect(provider("openai", srv.url, http=client(sleeps)), request())
    assert sleeps.delays == [1.5]  # the exhausted limit's reset, not the backoff draw


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"x-ratelimit-reset-requests": "20ms"}, 0.02),
        ({"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-reset-requests": "1s"}, 1.0),
        (
            {
                "x-ratelimit-remaining-tokens": "0",
                "x-ratelimit-reset-tokens": "1h2m3.5s",
                "x-ratelimit-reset-requests": "1s",
            },
            3723.5,
        ),
        # Anthropic: RFC 3339 times
        (
            {
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": "2025-01-01T00:00:30Z",
            },
            30.0,
        ),
        ({"x-ratelimit-reset-requests": "soon"}, None),
        ({}, None),
    ],
)
def test_rate_limit_reset(headers: dict[str, str], expected: float | None) -> None:
    now = 1735689600.0  # 2025-01-01T00:00:00Z
    got = rate_limit_reset(headers, now=now)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_quota_through_the_product_is_one_request_and_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = Case(
        name="openai-insufficient-quota",
        kind="openai",
        status=429,
        body=QUOTA_429,
        source="OpenAI error codes guide",
        then=[Turn(text="never")] * 5,
    )
    got = replay(case, tmp_path, capsys, monkeypatch)
    assert len(got.bodies) == 1  # was 5 over ~15 s
    assert got.code == 1 and got.result.get("is_error") is True
    dumped = json.dumps(got.result)
    assert "provider.rejected" in dumped and "provider.transient" not in dumped
    assert "insufficient_quota" in dumped and "add credit" in dumped
