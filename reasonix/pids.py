"""Whether a process id names a live process: the one check every layer uses.

``os.kill(pid, 0)`` asks the kernel without sending anything on POSIX; on
Windows the same call would *terminate* the process, so there the question
goes to ``OpenProcess``/``GetExitCodeProcess`` instead. A zombie counts as
alive here (it still holds its pid); callers that must tell the two apart
look closer (``reasonix/tool/builtin/_proc.py``).
"""

from __future__ import annotations

import os

__all__ = ["pid_alive"]

_STILL_ACTIVE = 259  # GetExitCodeProcess's answer for a process that has not ended
_QUERY_LIMITED_INFORMATION = 0x1000  # PROCESS_QUERY_LIMITED_INFORMATION


def pid_alive(pid: int) -> bool:
    """True while a process ``pid`` exists (ours or another user's); False for ``pid <= 0``."""
    if pid <= 0:
        return False  # 0 and negatives name process groups to os.kill, not a process
    if os.name == "nt":
        return _windows_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists; it is just not ours to signal
    except OverflowError:
        return False  # larger than any pid the system hands out
    return True


def _windows_alive(pid: int) -> bool:
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
    handle = kernel32.OpenProcess(_QUERY_LIMITED_INFORMATION, False, pid)
    if not handle:
        return False
    code = ctypes.c_ulong()
    kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
    kernel32.CloseHandle(handle)
    return code.value == _STILL_ACTIVE
