"""All sessions of the served workspace: lookup, creation, commands, idle release.

Sessions are the CLI's: the same JSONL transcripts under
``<state>/sessions/<project>/`` and the same leases. A session appears here
as soon as it is on disk (``reasonix -c`` sees browser sessions and the
browser lists CLI ones); a :class:`~reasonix.serve.slot.Slot` is made for it
the first time the browser touches it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.agent.session import find_session, list_sessions
from reasonix.boot import PERMISSION_MODES, RuntimeOptions, build_runtime
from reasonix.errors import ReasonixError, SessionError
from reasonix.lazy import Pattern

from .slot import Busy, Slot

if TYPE_CHECKING:
    from typing import Any

__all__ = ["Manager", "NotFound"]

_ID = Pattern(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")


class NotFound(ReasonixError):
    """No such session in this workspace."""


class Manager:
    """The sessions of one workspace and the thread that releases idle ones."""

    def __init__(self, workspace: Path, *, release_after: float = 60.0) -> None:
        self.workspace = workspace
        self.release_after = release_after
        self.slots: dict[str, Slot] = {}
        self.lock = threading.Lock()
        self.build_lock = threading.Lock()  # one runtime is built at a time
        self._stop = threading.Event()
        self._reaper: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------
    def start(self) -> None:
        """Start releasing idle sessions in the background."""
        self._reaper = threading.Thread(target=self._reap_loop, name="serve-reaper", daemon=True)
        self._reaper.start()

    def _reap_loop(self) -> None:
        tick = max(0.05, min(1.0, self.release_after / 4))
        while not self._stop.wait(tick):
            self.reap()

    def reap(self) -> list[str]:
        """Release every live session idle for ``release_after`` seconds; their ids."""
        now = time.monotonic()
        with self.lock:
            slots = list(self.slots.values())
        released = []
        for slot in slots:
            idle = now - slot.last_active >= self.release_after
            if slot.runtime is not None and idle and not slot.pending and slot.release():
                released.append(slot.id)
        return released

    def close(self) -> None:
        """Stop every turn, wait for it, release every lease (SIGTERM)."""
        self._stop.set()
        if self._reaper is not None:
            self._reaper.join(5)
        with self.lock:
            slots = list(self.slots.values())
        for slot in slots:
            slot.stop()  # all at once, then wait for each
        for slot in slots:
            slot.close()

    # -- finding sessions -----------------------------------------------------------
    def sessions(self) -> list[dict[str, Any]]:
        """This workspace's sessions, newest first, with whether each is live or busy."""
        with self.lock:
            slots = dict(self.slots)
        out = []
        for info in list_sessions(self.workspace):
            slot = slots.get(info.id)
            title = info.title or (slot.first_prompt if slot else "")
            out.append({"id": info.id, "title": title, "modified": info.modified,
                        "live": bool(slot and slot.runtime is not None),
                        "busy": bool(slot and slot.busy)})  # fmt: skip
        return out

    def get(self, session_id: str) -> Slot:
        """The slot of a stored session (made on first use); NotFound otherwise."""
        if not _ID.match(session_id):
            raise NotFound(f"no session {session_id!r}")
        with self.lock:
            slot = self.slots.get(session_id)
            if slot is not None:
                return slot
        info = next((i for i in list_sessions(self.workspace) if i.id == session_id), None)
        if info is None:
            raise NotFound(f"no session {session_id!r} in this project")
        with self.lock:
            return self.slots.setdefault(session_id, Slot(info.id, info.path, self.workspace))

    def create(self) -> Slot:
        """A new session (its runtime is built now: the transcript and lease exist at once)."""
        with self.build_lock:
            rt = build_runtime(RuntimeOptions(workspace=self.workspace, interactive=True))
        slot = Slot(rt.session.id, rt.session.path, self.workspace)
        slot.attach(rt)
        with self.lock:
            self.slots[slot.id] = slot
        return slot

    # -- what the page does ---------------------------------------------------------
    def send(self, session_id: str, text: str) -> dict[str, Any]:
        """A line from the composer: a ``/`` command, or the next user turn."""
        from .commands import plain_text

        slot = self.get(session_id)
        if not text.strip():
            raise ReasonixError("nothing to send")
        if text.lstrip().startswith("/"):
            slot.ensure_runtime(self.build_lock)
            if slot.command_registry().is_command(text):
                return self.command(slot, text)
            text = plain_text(text)  # "//x" is the text "/x"; "/a/path …" is text as it is
        slot.start_turn(text, self.build_lock, lambda: None)
        return {"session": slot.id, "started": True}

    def command(self, slot: Slot, line: str) -> dict[str, Any]:
        """Run one slash command; its text goes to every tab, pickers back to the caller."""
        if slot.busy:
            raise Busy("a turn is running: commands can run when it ends (or press Stop)")
        rt = slot.ensure_runtime(self.build_lock)
        self._free_resume_target(slot, line)
        result = slot.command_registry().run(line)
        target = self._follow(slot, rt)
        target.last_active = time.monotonic()
        target.model, target.mode = rt.resolved.ref, rt.mode  # /model: kept across rebuilds
        out: dict[str, Any] = {"session": target.id, "started": False}
        if result.text:
            target.hub.publish({"type": "command", "command": line.split()[0],
                                "text": result.text, "error": bool(result.error)})  # fmt: skip
        if result.picker:
            out["picker"] = {
                "title": result.picker_title,
                "command": result.picker_command,
                "items": [{"label": i.label, "value": i.value, "description": i.description}
                          for i in result.picker],
            }  # fmt: skip
        if result.confirm:
            out["confirm"] = {"text": result.confirm, "command": result.confirm_command}
        if result.exit:
            out["text"] = "this is a browser session: close the tab to leave (the session is saved)"
        target.hub.publish(target.status())
        if result.prompt:
            target.start_turn(result.prompt, self.build_lock, lambda: None, result.turn)
            out["started"] = True
        return out

    def _free_resume_target(self, slot: Slot, line: str) -> None:
        """``/resume X`` of a session another tab has live here: release it so this takes it."""
        name, _, query = line.strip().partition(" ")
        if name != "/resume" or not query.strip():
            return
        try:
            target = find_session(self.workspace, query.strip()).stem
        except SessionError:
            return  # the command itself says what matched
        with self.lock:
            other = self.slots.get(target)
        if other is None or other is slot or other.runtime is None:
            return
        if other.busy:
            raise Busy(f"session {target} is running a turn in another tab; wait or stop it there")
        other.release()

    def _follow(self, slot: Slot, rt: Any) -> Slot:
        """After /new, /clear or /resume the runtime holds another session: move it there."""
        new_id = rt.session.id
        if new_id == slot.id:
            return slot
        with slot.lock:
            slot.runtime, slot.commands = None, None
        with self.lock:
            target = self.slots.get(new_id)
            if target is None:
                target = self.slots[new_id] = Slot(new_id, rt.session.path, self.workspace)
        target.mode, target.model = slot.mode, slot.model
        target.attach(rt)
        slot.hub.publish({"type": "switched", "session": new_id})
        slot.hub.publish(slot.status())
        return target

    def set_mode(self, session_id: str, mode: str) -> dict[str, Any]:
        """Change the permission mode (kept for this session across rebuilds)."""
        if mode not in PERMISSION_MODES:
            raise ReasonixError(f"unknown mode {mode!r}; known: {', '.join(PERMISSION_MODES)}")
        slot = self.get(session_id)
        with slot.lock:
            rt = slot.runtime
            slot.mode = rt.set_mode(mode) if rt is not None else mode
            slot.last_active = time.monotonic()
        status = slot.status()
        slot.hub.publish(status)
        return status

    def set_model(self, session_id: str, ref: str) -> dict[str, Any]:
        """Use another model from the next request on (refused while a turn runs)."""
        slot = self.get(session_id)
        with slot.lock:
            if slot.busy:
                raise Busy("a turn is running: change the model when it ends")
            rt = slot.ensure_runtime(self.build_lock)
            slot.model = rt.switch_model(ref.strip()).ref
            slot.last_active = time.monotonic()
        status = slot.status()
        slot.hub.publish(status)
        return status

    def complete(self, session_id: str, text: str) -> list[dict[str, str]]:
        """Completions for the composer: the ``@`` word being typed, or ``/`` commands."""
        slot = self.get(session_id)
        slot.ensure_runtime(self.build_lock)
        slot.last_active = time.monotonic()
        found = slot.command_registry().complete(text)
        return [{"text": c.text, "description": c.description} for c in found[:50]]
