"""Sampling parameters only when wanted, and a refused parameter left out (issue 33, Deliver 2).

Each kind's body carries ``temperature`` / ``top_p`` only when configured
(``[agent] temperature`` or ``model_overrides.<model>.*``), never beside a
reasoning effort where the kind or model refuses it; a 400 naming an
unsupported parameter is answered by one retry without it, remembered per
model for the session, with a notice. Error bodies are the vendors' own
(sources in the comments); bodies are checked on the loopback fakes' records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeServer, Fault, ToolSpec, Turn
from fakes.script import Step
from provider_kit import collect, provider, request, text

from reasonix.cli.main import main
from reasonix.config.model import ModelOverride
from reasonix.errors import ProviderAPIError
from reasonix.provider.types import Message, Request, Role

# OpenAI's answer to temperature on a reasoning model (o1/o3-mini/gpt-5), as published in
# many reports (e.g. github.com/ai-christianson/RA.Aid/issues/70, langchain4j traces).
UNSUPPORTED_TEMPERATURE = json.dumps(
    {
        "error": {
            "message": "Unsupported parameter: 'temperature' is not supported with this model.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_parameter",
        }
    }
)
# gpt-5 on chat completions: only the default value (github.com/nashsu/llm_wiki/issues/670).
UNSUPPORTED_VALUE = json.dumps(
    {
        "error": {
            "message": "Unsupported value: 'temperature' does not support 0.3 with this model. "
            "Only the default (1) value is supported.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_value",
        }
    }
)
# o1 and later on chat completions asked with max_tokens.
UNSUPPORTED_MAX_TOKENS = json.dumps(
    {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    }
)
UNSUPPORTED_EFFORT = json.dumps(
    {
        "error": {
            "message": "Unrecognized request argument supplied: reasoning_effort",
            "type": "invalid_request_error",
            "param": "reasoning_effort",
            "code": "unsupported_parameter",
        }
    }
)
# Anthropic's Claude 4.5 models refuse the pair (github.com/BerriAI/litellm/issues/15097).
ANTHROPIC_BOTH = json.dumps(
    {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "`temperature` and `top_p` cannot both be specified for this model. "
            "Please use only one.",
        },
    }
)


def _body(srv: FakeServer, i: int = 0) -> dict[str, Any]:
    got = srv.requests[i].json
    assert isinstance(got, dict)
    return got


# -- what is sent ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
def test_nothing_configured_sends_no_sampling(kind: str) -> None:
    with FakeServer(kind, [Turn(text="hi")]) as srv:
        collect(provider(kind, srv.url), request())
        body = _body(srv)
    assert "temperature" not in body and "top_p" not in body


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
def test_model_override_wins_over_agent_temperature(kind: str) -> None:
    ov = {"fake-model": ModelOverride(temperature=0.7, top_p=0.9)}
    with FakeServer(kind, [Turn(text="hi")]) as srv:
        collect(provider(kind, srv.url, model_overrides=ov), request(temperature=0.2))
        body = _body(srv)
    assert body["temperature"] == 0.7
    if kind == "anthropic":  # recent Claude models refuse the pair: temperature is kept
        assert "top_p" not in body
    else:
        assert body["top_p"] == 0.9


def test_responses_effort_carries_no_temperature() -> None:
    # Responses reasoning models answer temperature beside reasoning.effort with a 400.
    with FakeServer("responses", [Turn(text="hi")]) as srv:
        collect(provider("responses", srv.url), request(temperature=0.2, effort="high"))
        body = _body(srv)
    assert body["reasoning"]["effort"] == "high"
    assert "temperature" not in body


@pytest.mark.parametrize(
    ("model", "sent"),
    [("gpt-5", False), ("o3-mini", False), ("openai/gpt-5", False), ("deepseek-chat", True)],
)
def test_openai_effort_drops_sampling_only_on_reasoning_models(model: str, sent: bool) -> None:
    req = Request(model=model, messages=[Message(Role.USER, "x")], temperature=0.2, effort="low")
    with FakeServer("openai", [Turn(text="hi")]) as srv:
        collect(provider("openai", srv.url), req)
        body = _body(srv)
    assert body["reasoning_effort"] == "low"
    assert ("temperature" in body) is sent


@pytest.mark.parametrize(("top_p", "kept"), [(0.9, False), (0.97, True)])
def test_anthropic_thinking_keeps_only_a_top_p_it_accepts(top_p: float, kept: bool) -> None:
    ov = {"fake-model": ModelOverride(top_p=top_p)}
    with FakeServer("anthropic", [Turn(text="hi")]) as srv:
        p = provider("anthropic", srv.url, model_overrides=ov)
        collect(p, request(temperature=0.3, effort="low", max_tokens=16000))
        body = _body(srv)
    assert body["thinking"]["type"] == "enabled"
    assert "temperature" not in body
    assert ("top_p" in body) is kept


# -- a refused parameter -------------------------------------------------------------


def test_unsupported_temperature_is_retried_without_it_and_remembered() -> None:
    script: list[Step] = [
        Fault.status(400, body=UNSUPPORTED_TEMPERATURE),
        Turn(text="ok"),
        Turn(text="again"),
    ]
    with FakeServer("openai", script) as srv:
        p = provider("openai", srv.url)
        first = collect(p, request(temperature=0.2))
        notes = p.take_notices()
        second = collect(p, request(temperature=0.2))
        bodies = [_body(srv, i) for i in range(3)]
    assert text(first) == "ok" and text(second) == "again"
    assert bodies[0]["temperature"] == 0.2
    assert "temperature" not in bodies[1] and "temperature" not in bodies[2]  # remembered
    assert len(notes) == 1 and "temperature" in notes[0] and "fake-model" in notes[0]
    assert p.take_notices() == []  # told once


def test_unsupported_value_is_left_out_too() -> None:
    script: list[Step] = [Fault.status(400, body=UNSUPPORTED_VALUE), Turn(text="ok")]
    with FakeServer("openai", script) as srv:
        p = provider("openai", srv.url)
        assert text(collect(p, request(temperature=0.3))) == "ok"
        assert "temperature" not in _body(srv, 1)


def test_max_tokens_is_renamed_when_the_vendor_names_the_replacement() -> None:
    script: list[Step] = [Fault.status(400, body=UNSUPPORTED_MAX_TOKENS), Turn(text="ok")]
    with FakeServer("openai", script) as srv:
        p = provider("openai", srv.url)
        assert text(collect(p, request(max_tokens=777))) == "ok"
        first, second = _body(srv, 0), _body(srv, 1)
    assert first["max_tokens"] == 777
    assert "max_tokens" not in second and second["max_completion_tokens"] == 777


def test_unsupported_reasoning_effort_is_left_out() -> None:
    script: list[Step] = [Fault.status(400, body=UNSUPPORTED_EFFORT), Turn(text="ok")]
    with FakeServer("openai", script) as srv:
        p = provider("openai", srv.url)
        assert text(collect(p, request(effort="high"))) == "ok"
        assert "reasoning_effort" not in _body(srv, 1)


def test_anthropic_pair_refusal_leaves_out_top_p() -> None:
    # Reached when extra_body adds top_p beside a configured temperature.
    script: list[Step] = [Fault.status(400, body=ANTHROPIC_BOTH), Turn(text="ok")]
    with FakeServer("anthropic", script) as srv:
        p = provider("anthropic", srv.url, extra_body={"top_p": 0.5})
        assert text(collect(p, request(temperature=0.3))) == "ok"
        first, second = _body(srv, 0), _body(srv, 1)
    assert first["top_p"] == 0.5 and "top_p" not in second and second["temperature"] == 0.3


def test_other_400s_are_not_retried() -> None:
    other = json.dumps({"error": {"message": "bad messages", "type": "invalid_request_error"}})
    with FakeServer("openai", [Fault.status(400, body=other), Turn(text="never")]) as srv:
        p = provider("openai", srv.url)
        with pytest.raises(ProviderAPIError):
            collect(p, request(temperature=0.2))
        assert len(srv.requests) == 1
    assert p.take_notices() == []


def test_a_parameter_the_body_did_not_carry_is_not_retried() -> None:
    with FakeServer("openai", [Fault.status(400, body=UNSUPPORTED_TEMPERATURE)]) as srv:
        p = provider("openai", srv.url)
        with pytest.raises(ProviderAPIError):
            collect(p, request())  # no temperature was sent: nothing to leave out
        assert len(srv.requests) == 1


def test_a_second_refusal_of_the_same_parameter_stands() -> None:
    # extra_body puts temperature back on every body: the vendor's second 400 is final.
    script: list[Step] = [Fault.status(400, body=UNSUPPORTED_TEMPERATURE)] * 2 + [Turn(text="no")]
    with FakeServer("openai", script) as srv:
        p = provider("openai", srv.url, extra_body={"temperature": 0.4})
        with pytest.raises(ProviderAPIError):
            collect(p, request())
        assert len(srv.requests) == 2


# -- through the product: config -> request, and the notice ------------------------------


def _run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    mp: pytest.MonkeyPatch,
    script: list[Any],
    extra_toml: str = "",
    agent_toml: str = "",
    kind: str = "openai",
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``run --output-format stream-json -y`` against ``script``: (events, request bodies)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    mp.chdir(ws)
    mp.setenv("FAKE_PROVIDER_KEY", "sk-test")
    with FakeServer(kind, script) as srv:
        (ws / "reasonix.toml").write_text(
            f'default_model = "vendor/m1"\n{agent_toml}\n[[providers]]\nname = "vendor"\n'
            f'kind = "{kind}"\nbase_url = "{srv.url}"\nmodels = ["m1"]\n'
            f'api_key_env = "FAKE_PROVIDER_KEY"\n{extra_toml}'
        )
        capsys.readouterr()
        main(["run", "--output-format", "stream-json", "-y", "go"])
        out = capsys.readouterr().out
        bodies = [r.json for r in srv.requests]
    events = [json.loads(line) for line in out.splitlines() if line.strip().startswith("{")]
    return events, bodies


def test_default_config_sends_no_temperature(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, bodies = _run(tmp_path, capsys, monkeypatch, [Turn(text="hi")])
    assert len(bodies) == 1 and "temperature" not in bodies[0]


def test_configured_temperature_and_override_reach_the_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, bodies = _run(
        tmp_path,
        capsys,
        monkeypatch,
        [Turn(text="hi")],
        extra_toml="[providers.model_overrides.m1]\ntop_p = 0.8\n",
        agent_toml="[agent]\ntemperature = 0.3\n",
    )
    assert bodies[0]["temperature"] == 0.3 and bodies[0]["top_p"] == 0.8


def test_refused_temperature_notice_and_memory_through_a_tool_loop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    script: list[Step] = [
        Fault.status(400, body=UNSUPPORTED_TEMPERATURE),
        Turn.tools([ToolSpec("read_file", '{"path": "nothing.txt"}')]),
        Turn(text="done"),
    ]
    events, bodies = _run(
        tmp_path, capsys, monkeypatch, script, agent_toml="[agent]\ntemperature = 0.2\n"
    )
    assert len(bodies) == 3
    assert bodies[0]["temperature"] == 0.2
    assert "temperature" not in bodies[1] and "temperature" not in bodies[2]
    notices = [e for e in events if e.get("type") == "notice" and e.get("kind") == "provider"]
    assert len(notices) == 1 and "temperature" in notices[0]["text"], events
    assert events[-1].get("subtype") == "success", events[-1]
