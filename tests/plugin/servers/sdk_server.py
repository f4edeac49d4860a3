"""Our MCP test server on the PyPI ``mcp`` SDK (a real server of someone else's making).

Usage: ``python sdk_server.py stdio`` | ``sse PORT`` | ``http PORT [json] [stateless]``.
It offers the tools, prompt and resource the conformance matrix exercises,
including ``roots`` (server→client ``roots/list`` in the handshake era, an
input-required round in the stateless 2026-07-28 era) and ``big`` (a result of
N bytes).
"""

from __future__ import annotations

import asyncio
import sys
import warnings

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp_types import InputRequiredResult, ListRootsRequest, ToolAnnotations

warnings.simplefilter("ignore")  # the roots API is deprecated in 2026-07-28; we test it anyway

app = MCPServer("reasonix-test")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Return the text unchanged."""
    return f"echo: {text}"


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Report `steps` progress notifications, then finish."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
        await asyncio.sleep(0.01)
    return f"done after {steps} steps"


@app.tool()
async def roots(ctx: Context) -> str | InputRequiredResult:
    """List the client's roots."""
    version = ctx.protocol_version or ""
    if version >= "2026-07-28":
        answers = ctx.input_responses or {}
        if "roots" not in answers:
            return InputRequiredResult(input_requests={"roots": ListRootsRequest()})
        listed = answers["roots"]
        return "roots: " + " ".join(str(r.uri) for r in listed.roots)
    result = await ctx.session.list_roots()
    return "roots: " + " ".join(str(r.uri) for r in result.roots)


@app.tool()
def big(size: int) -> str:
    """Return a string of `size` bytes."""
    return "x" * size


@app.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@app.tool()
async def interrupted(ctx: Context) -> str:
    """Cut its own SSE reply stream midway (resumable mode), then finish."""
    await ctx.report_progress(1, 2, "before the cut")
    await ctx.close_sse_stream()
    await asyncio.sleep(0.3)
    await ctx.report_progress(2, 2, "after the cut")
    return "survived the cut"


class MemoryEventStore(EventStore):
    """Keeps every event so a cut stream can be replayed after Last-Event-ID."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, object]] = []  # (event id, stream id, message)

    async def store_event(self, stream_id, message):  # type: ignore[no-untyped-def]
        event_id = str(len(self.events) + 1)
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback: EventCallback):  # type: ignore[no-untyped-def]
        ids = [e[0] for e in self.events]
        if last_event_id not in ids:
            return None
        stream = self.events[ids.index(last_event_id)][1]
        for event_id, stream_id, message in self.events[ids.index(last_event_id) + 1 :]:
            if stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))  # type: ignore[arg-type]
        return stream


@app.tool()
def fail() -> str:
    """Always fails (an isError result)."""
    raise ValueError("this tool always fails")


@app.prompt()
def greet(name: str) -> str:
    """A greeting prompt."""
    return f"Please greet {name} warmly."


@app.resource("test://hello", mime_type="text/plain")
def hello() -> str:
    """A static resource."""
    return "hello from the resource"


def main(argv: list[str]) -> None:
    mode = argv[0] if argv else "stdio"
    if mode == "stdio":
        app.run("stdio")
    elif mode == "sse":
        app.run("sse", host="127.0.0.1", port=int(argv[1]))
    elif mode == "http":
        app.run(
            "streamable-http",
            host="127.0.0.1",
            port=int(argv[1]),
            json_response="json" in argv[2:],
            stateless_http="stateless" in argv[2:],
            event_store=MemoryEventStore() if "resume" in argv[2:] else None,
            retry_interval=100 if "resume" in argv[2:] else None,
        )
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
