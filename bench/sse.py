"""Benchmark SSE decoding: reasonix.provider.sse against httpx-sse, same bytes.

Generates (deterministically, seed 42) a ~20 MB recorded-style stream of
OpenAI chat-completion chunks — short text deltas with some CJK, tool-call
argument deltas, periodic keep-alive comments, a usage chunk — and decodes
it in 16 KiB reads with:

* ours: ``SSEDecoder.feed(bytes)`` per read;
* httpx-sse: the way ``EventSource.iter_sse`` does it — an incremental UTF-8
  decoder (httpx ``iter_text``), ``SSELineDecoder.decode(text)`` for lines,
  ``line.rstrip("\\n")``, then ``SSEDecoder.decode(line)`` per line.

Both must yield the same number of events with the same data. Prints one line:
``sse: ours X MB/s, httpx-sse Y MB/s, ratio Z`` (target ratio >= 1.0).

Usage: python bench/sse.py [--mb 20] [--runs 5] [--read 16384]
"""

from __future__ import annotations

import argparse
import codecs
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reasonix.provider.sse import SSEDecoder

WORDS = ["the", "model", "streams", "tokens", "quickly", "函数", "调用", "résumé", "\n", "code"]


def make_stream(megabytes: float, seed: int = 42) -> bytes:
    """A deterministic chat-completions SSE stream of about ``megabytes`` MB."""
    rng = random.Random(seed)
    head = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "deepseek-chat",
    }
    out: list[bytes] = []
    size, target, n = 0, int(megabytes * 1_000_000), 0
    while size < target:
        n += 1
        if n % 50 == 0:
            piece = b": keep-alive\n\n"
        else:
            if n % 7 == 0:
                delta = {
                    "tool_calls": [
                        {
                            "index": n % 2,
                            "function": {
                                "arguments": json.dumps({"k": rng.choice(WORDS)})[
                                    : rng.randint(2, 12)
                                ]
                            },
                        }
                    ]
                }
            else:
                delta = {"content": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))}
            obj = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            piece = b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"
        out.append(piece)
        size += len(piece)
    out.append(b'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}\n\n')
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def reads(data: bytes, size: int) -> list[bytes]:
    """The stream cut into socket-sized reads."""
    return [data[i : i + size] for i in range(0, len(data), size)]


def ours(chunks: list[bytes]) -> list[str]:
    """Decode with reasonix.provider.sse."""
    dec = SSEDecoder()
    out: list[str] = []
    for chunk in chunks:
        out.extend(ev.data for ev in dec.feed(chunk))
    return out


def httpx_sse(chunks: list[bytes]) -> list[str]:
    """Decode with httpx-sse, fed the way EventSource.iter_sse feeds it."""
    from httpx_sse._decoders import SSEDecoder as RefDecoder
    from httpx_sse._decoders import SSELineDecoder

    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines = SSELineDecoder()
    dec = RefDecoder()
    out: list[str] = []
    for chunk in chunks:
        for line in lines.decode(text.decode(chunk)):
            sse = dec.decode(line.rstrip("\n"))
            if sse is not None and sse.data:
                out.append(sse.data)
    for line in lines.flush():
        sse = dec.decode(line.rstrip("\n"))
        if sse is not None and sse.data:
            out.append(sse.data)
    return out


def best_rate(fn: Callable[[list[bytes]], list[str]], chunks: list[bytes], runs: int) -> float:
    """Median MB/s over ``runs``."""
    total = sum(len(c) for c in chunks) / 1_000_000
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(chunks)
        rates.append(total / (time.perf_counter() - start))
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the one-line summary."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--read", type=int, default=16384, help="bytes per simulated read")
    args = ap.parse_args(argv)
    chunks = reads(make_stream(args.mb), args.read)
    a, b = ours(chunks), httpx_sse(chunks)
    if a != b:
        print(f"sse: MISMATCH ours {len(a)} events, httpx-sse {len(b)} events")
        return 1
    mine = best_rate(ours, chunks, args.runs)
    ref = best_rate(httpx_sse, chunks, args.runs)
    print(f"sse: ours {mine:.1f} MB/s, httpx-sse {ref:.1f} MB/s, ratio {mine / ref:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
