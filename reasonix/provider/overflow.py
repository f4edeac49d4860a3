"""What a context-overflow error says about the server's window (pure).

Servers word their refusal differently, and most of them name the numbers:
the window they serve and the size of the request they refused. Reading
those lets a session learn the real window from the first refusal instead
of trusting a configured number that came from a model card.

:func:`overflow_facts` takes the raw error text (message and body) of an
error that :attr:`~reasonix.errors.ProviderAPIError.is_context_overflow`
already recognised and returns the window and the prompt size it names.
The patterns are the recorded wordings of OpenAI, Anthropic, DeepSeek,
OpenRouter, LiteLLM, llama.cpp, vLLM, SGLang, LM Studio, xAI, Gemini,
Mistral and Moonshot (tests/fakes/dialects.py replays them).
"""

from __future__ import annotations

import functools
import re

from reasonix.lazy import dataclass

__all__ = ["MIN_WINDOW", "OverflowFacts", "overflow_facts"]

# Below this a number is a parse accident (an id, a count), not a context window.
MIN_WINDOW = 256
_MAX_WINDOW = 100_000_000


@dataclass(frozen=True)
class OverflowFacts:
    """The numbers an overflow error names (None where it names none)."""

    window: int | None = None  # the context window the server serves, in tokens
    prompt: int | None = None  # the size of the refused request's prompt, in tokens


# Window first: the most specific wordings lead, so a message naming several
# numbers ("N tokens > W maximum") is read the way its server meant it.
_WINDOW = (
    r'"n_ctx"\s*:\s*(\d+)',  # llama.cpp error JSON
    r"available context size \((\d+) tokens?\)",  # llama.cpp
    r"\bn_ctx\b\s*[:=(]?\s*\(?\s*(\d+)",  # "n_ctx: 4096", "n_ctx (7424)"
    r"prompt is too long: \d+ tokens > (\d+)",  # Anthropic
    r"exceed context limit: \d+ \+ \d+ > (\d+)",  # Anthropic, prompt + max_tokens
    r"maximum context length (?:is|of)\s*(\d+)",  # OpenAI, vLLM, SGLang, OpenRouter, DeepSeek
    r"maximum context length \((\d+)\)",
    r"context length \((\d+) tokens?\)",  # SGLang / Together "... context length (W tokens)"
    r"context length only supports (\d+)",  # LM Studio 0.4.21+
    r"context length of (?:only )?(\d+)",  # LM Studio, "Reached context length of W"
    r"context window of (\d+)",
    r"context limit is (\d+)",
    r"maximum prompt length is (\d+)",  # xAI, vLLM --max-prompt-length
    r"over the limit of (\d+)",
    r"maximum number of tokens allowed \((\d+)\)",  # Gemini
    r"model token limit:?\s*(\d+)",  # Moonshot
    r"(\d+) maximum context length",  # Mistral
)
_PROMPT = (
    r'"n_prompt_tokens"\s*:\s*(\d+)',  # llama.cpp error JSON
    r"request \((\d+) tokens?\) exceeds",  # llama.cpp message
    r"your request has (\d+) (?:input |prompt )?tokens",  # vLLM
    r"your messages resulted in (\d+) tokens",  # OpenAI
    r"(\d+) in the messages",  # OpenAI/DeepSeek "(N in the messages, K in the completion)"
    r"(\d+) tokens from the input",  # SGLang
    r"(\d+) of text input",  # OpenRouter
    r"the input \((\d+) tokens?\)",  # SGLang / Together
    r"the input has (\d+) tokens",  # LM Studio 0.4.21+
    r"keep the first (\d+) tokens",  # LM Studio
    r"\bn_keep\b\s*[:=(]?\s*\(?\s*(\d+)",  # LM Studio / llama.cpp
    r"prompt is too long: (\d+) tokens",  # Anthropic
    r"context limit: (\d+) \+",  # Anthropic
    r"input length \(?(\d+)\)?",
    r"request contains (\d+) tokens",  # xAI
    r"(\d+) input tokens over the limit",
    r"input token count \((\d+)\)",  # Gemini
    r"prompt contains (\d+) tokens",  # Mistral
    r"prompt=(\d+)",
    r"you requested (?:about )?(\d+) tokens",  # total incl. the completion: the last resort
)


@functools.cache
def _compiled() -> tuple[list[re.Pattern[str]], list[re.Pattern[str]]]:
    """The patterns, compiled on first use (never at import)."""
    return (
        [re.compile(p, re.IGNORECASE) for p in _WINDOW],
        [re.compile(p, re.IGNORECASE) for p in _PROMPT],
    )


def _first(patterns: list[re.Pattern[str]], text: str, low: int) -> int | None:
    for pattern in patterns:
        for m in pattern.finditer(text):
            value = int(m.group(1))
            if low <= value <= _MAX_WINDOW:
                return value
    return None


def overflow_facts(text: str) -> OverflowFacts:
    """The window and the prompt size a context-overflow error names.

    ``text`` is the error's message and raw body together; numbers that are
    not plausible (below :data:`MIN_WINDOW` for a window) are ignored.
    """
    windows, prompts = _compiled()
    return OverflowFacts(window=_first(windows, text, MIN_WINDOW), prompt=_first(prompts, text, 1))
