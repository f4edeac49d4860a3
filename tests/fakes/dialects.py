"""What model servers say when a request does not fit, and what they say about their window.

``OVERFLOWS[name](window, prompt)`` is the fault a server of that dialect
answers a request of ``prompt`` tokens with when it serves ``window`` tokens.
The bodies follow the servers' recorded answers (llama.cpp's
``exceed_context_size_error`` as seen against ``llama-server -c 8192``, vLLM's
and SGLang's serving code, LM Studio's bug-tracker reports, Ollama's runner,
LiteLLM and OpenRouter pass-through forms); the wording is theirs, the fakes
are ours. ``NAMES_NO_NUMBERS`` are the dialects whose refusal names no window.

The metadata builders answer the start-up probe the way each server does:
``llama_cpp_props``, ``ollama_show`` / ``ollama_ps``, ``lmstudio_model``,
``openai_models`` — pass them as ``FakeServer(meta={...})``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fakes.script import Fault

__all__ = [
    "NAMES_NO_NUMBERS",
    "OVERFLOWS",
    "llama_cpp_props",
    "lmstudio_model",
    "ollama_ps",
    "ollama_show",
    "openai_models",
]


def _openai_error(message: str, *, typ: Any = "invalid_request_error", code: Any = None) -> str:
    return json.dumps({"error": {"message": message, "type": typ, "param": None, "code": code}})


def _llama_cpp(window: int, prompt: int) -> Fault:
    body = {
        "error": {
            "code": 400,
            "message": f"request ({prompt} tokens) exceeds the available context size "
            f"({window} tokens), try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": prompt,
            "n_ctx": window,
        }
    }
    return Fault.status(400, body=json.dumps(body))


def _vllm(window: int, prompt: int) -> Fault:
    message = (
        f"This model's maximum context length is {window} tokens. However, your request has "
        f"{prompt} input tokens. Please reduce the length of the input messages."
    )
    return Fault.status(400, body=_openai_error(message, typ="BadRequestError", code=400))


def _vllm_legacy(window: int, prompt: int) -> Fault:
    total = prompt + 1000
    message = (
        f"This model's maximum context length is {window} tokens. However, you requested "
        f"{total} tokens ({prompt} in the messages, 1000 in the completion). Please reduce the "
        "length of the messages or completion."
    )
    obj = {"object": "error", "message": message, "type": "BadRequestError", "param": None}
    return Fault.status(400, body=json.dumps({**obj, "code": 400}))


def _sglang(window: int, prompt: int) -> Fault:
    message = (
        f"The input ({prompt} tokens) is longer than the model's context length ({window} tokens)."
    )
    obj = {"object": "error", "message": message, "type": "BadRequestError", "param": None}
    return Fault.status(400, body=json.dumps({**obj, "code": 400}))


def _sglang_total(window: int, prompt: int) -> Fault:
    message = (
        f"Requested token count exceeds the model's maximum context length of {window} tokens. "
        f"You requested a total of {prompt + 1000} tokens: {prompt} tokens from the input "
        "messages and 1000 tokens for the completion. Please reduce the number of tokens in the "
        "input messages or the completion to fit within the limit."
    )
    obj = {"object": "error", "message": message, "type": "BadRequestError", "param": None}
    return Fault.status(400, body=json.dumps({**obj, "code": 400}))


def _lmstudio_keep(window: int, prompt: int) -> Fault:
    message = (
        f"Trying to keep the first {prompt} tokens when context the overflows. However, the model "
        f"is loaded with context length of only {window} tokens, which is not enough. Try to load "
        "the model with a larger context length, or provide a shorter input"
    )
    return Fault.status(400, body=json.dumps({"error": message}))


def _lmstudio_nkeep(window: int, prompt: int) -> Fault:
    message = (
        "The number of tokens to keep from the initial prompt is greater than the context length "
        f"(n_keep: {prompt}>= n_ctx: {window}). Try to load the model with a larger context "
        "length, or provide a shorter input."
    )
    return Fault.status(400, body=json.dumps({"error": message}))


def _lmstudio_event(window: int, prompt: int) -> Fault:
    # LM Studio 0.4.21+: HTTP 200, then an error event instead of the answer.
    message = (
        f"Input does not fit in context length. The input has {prompt} tokens, but the context "
        f"length only supports {window} tokens."
    )
    data = json.dumps({"error": {"message": message}, "message": message})
    return Fault.sse(f"event: error\ndata: {data}\n\n")


def _ollama(window: int, prompt: int) -> Fault:
    # Ollama's runner with context shift off; /v1 wraps it in an OpenAI error. No numbers.
    message = (
        "the prompt is longer than the context length currently available to the model; "
        "shorten the prompt, adjust the context length in settings, or use a model with a "
        "longer context length"
    )
    return Fault.status(400, body=_openai_error(message))


def _litellm(window: int, prompt: int) -> Fault:
    message = (
        "litellm.ContextWindowExceededError: litellm.BadRequestError: OpenAIException - "
        f"This model's maximum context length is {window} tokens. However, your messages "
        f"resulted in {prompt} tokens. Please reduce the length of the messages."
    )
    return Fault.status(400, body=_openai_error(message, typ=None, code="400"))


def _openrouter(window: int, prompt: int) -> Fault:
    message = (
        f"This endpoint's maximum context length is {window} tokens. However, you requested "
        f"about {prompt + 1000} tokens ({prompt} of text input, 1000 in the output). Please "
        'reduce the length of either one, or use the "middle-out" transform to compress your '
        "prompt automatically."
    )
    return Fault.status(400, body=json.dumps({"error": {"message": message, "code": 400}}))


def _openai(window: int, prompt: int) -> Fault:
    message = (
        f"This model's maximum context length is {window} tokens. However, your messages "
        f"resulted in {prompt} tokens. Please reduce the length of the messages."
    )
    return Fault.status(400, body=_openai_error(message, code="context_length_exceeded"))


def _anthropic(window: int, prompt: int) -> Fault:
    err = {
        "type": "invalid_request_error",
        "message": f"prompt is too long: {prompt} tokens > {window} maximum",
    }
    return Fault.status(400, body=json.dumps({"type": "error", "error": err}))


OVERFLOWS: dict[str, Callable[[int, int], Fault]] = {
    "llama.cpp": _llama_cpp,
    "vllm": _vllm,
    "vllm-legacy": _vllm_legacy,
    "sglang": _sglang,
    "sglang-total": _sglang_total,
    "lmstudio-keep": _lmstudio_keep,
    "lmstudio-n_keep": _lmstudio_nkeep,
    "lmstudio-event": _lmstudio_event,
    "ollama": _ollama,
    "litellm": _litellm,
    "openrouter": _openrouter,
    "openai": _openai,
    "anthropic": _anthropic,
}
NAMES_NO_NUMBERS = frozenset({"ollama"})


# -- start-up metadata -------------------------------------------------------------


def llama_cpp_props(n_ctx: int) -> dict[str, Any]:
    """``GET /props`` of llama-server (the fields the probe reads, plus a few around them)."""
    return {
        "default_generation_settings": {"n_ctx": n_ctx, "params": {"n_predict": -1}},
        "total_slots": 1,
        "model_path": "/models/local.gguf",
        "build_info": "b6000-fake",
    }


def ollama_show(context_length: int, *, num_ctx: int | None = None) -> dict[str, Any]:
    """``POST /api/show``: the model's trained length; ``num_ctx`` when its Modelfile sets one."""
    params = 'stop "<|im_end|>"'
    if num_ctx is not None:
        params += f"\nnum_ctx {num_ctx}"
    return {
        "parameters": params,
        "details": {"family": "qwen2", "parameter_size": "7.6B"},
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": context_length},
        "capabilities": ["completion", "tools"],
    }


def ollama_ps(model: str, context_length: int) -> dict[str, Any]:
    """``GET /api/ps`` with ``model`` loaded at ``context_length`` (the running num_ctx)."""
    entry = {"name": model, "model": model, "size": 1, "size_vram": 1}
    return {"models": [{**entry, "context_length": context_length}]}


def lmstudio_model(model: str, *, loaded: int | None, trained: int) -> dict[str, Any]:
    """``GET /api/v0/models/<model>`` of LM Studio (``loaded`` None: not loaded)."""
    info: dict[str, Any] = {
        "id": model,
        "object": "model",
        "type": "llm",
        "max_context_length": trained,
    }
    info["state"] = "loaded" if loaded else "not-loaded"
    if loaded:
        info["loaded_context_length"] = loaded
    return info


def openai_models(model: str, **fields: Any) -> dict[str, Any]:
    """``GET /v1/models`` listing one model with ``fields`` (``max_model_len=…``, ``meta=…``)."""
    return {"object": "list", "data": [{"id": model, "object": "model", **fields}]}
