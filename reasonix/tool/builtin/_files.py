"""Shared file plumbing for the built-in file tools.

Text files keep what they came with: the encoding (UTF-8, UTF-8 with a BOM,
UTF-16 with a BOM, or Latin-1 as the lossless fallback) and the newline style
(LF or CRLF). Writes are atomic (temp file in the same directory, fsync,
``os.replace``) and keep the old file's permission bits.

When the run has a :class:`~reasonix.tool.ports.FileIO` port (an editor over
ACP), text is read from and written to the editor instead, after the same path
checks; every write is reported to ``ports.on_change`` either way.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
from pathlib import Path

from reasonix.errors import PathDenied, ToolError
from reasonix.lazy import Pattern, dataclass
from reasonix.tool import ToolContext
from reasonix.tool.builtin._regular import NotRegularFile, open_regular
from reasonix.tool.paths import display_path, resolve_read, resolve_write
from reasonix.tool.ports import FileChange

__all__ = [
    "SNIFF_BYTES",
    "WALK_NEEDS_READ",
    "TextFile",
    "atomic_write",
    "binary_kind",
    "check_regular_file",
    "detect_encoding",
    "load_text",
    "near_names",
    "open_real_dir",
    "read_text_via",
    "report_change",
    "resolve_edit",
    "split_lines",
    "unified_diff",
]

SNIFF_BYTES = 8192  # how much of a file decides text vs binary and the codec

# Magic bytes of common binary formats, so the refusal can say what the file is.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive (also docx/xlsx/jar/wheel)"),
    (b"\x1f\x8b", "gzip archive"),
    (b"\x7fELF", "ELF executable"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\x00asm", "WebAssembly module"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"BZh", "bzip2 archive"),
    (b"\xfd7zXZ\x00", "xz archive"),
)


def binary_kind(head: bytes) -> str | None:
    """Name the binary format of a file starting with ``head``, or None for text.

    Text with a UTF-16/UTF-8 BOM is text. Otherwise a known magic number or a
    NUL byte in the first 8 KiB means binary.
    """
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF8)):
        return None
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP image"
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    if b"\x00" in head[:SNIFF_BYTES]:
        return "binary data"
    return None


def detect_encoding(head: bytes) -> str:
    """Pick the codec for a file that starts with ``head``."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    try:
        # final=False: a multi-byte character cut at the sniff boundary is fine.
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return "latin-1"  # decodes every byte, so a round trip never corrupts the file
    return "utf-8"


@dataclass
class TextFile:
    """A decoded text file and how to write it back the same way."""

    path: Path
    text: str
    encoding: str
    newline: str  # "\r\n" or "\n": the file's dominant style
    mode: int | None = None
    ctx: ToolContext | None = None  # its ports route the write (editor) and report it

    def encode(self, text: str) -> bytes:
        """``text`` in the file's original encoding (a BOM is re-added by the codec).

        A Latin-1 file cannot hold every character; that is a ToolError the
        model can act on, not a crash.
        """
        try:
            return text.encode(self.encoding)
        except UnicodeEncodeError as err:
            char = err.object[err.start]
            if 0xD800 <= ord(char) <= 0xDFFF:
                raise ToolError(
                    f"the new text holds a lone surrogate {char!r}, which is no character; "
                    "nothing was written"
                ) from None
            raise ToolError(
                f"{self.path.name} is stored as {self.encoding}, which cannot hold {char!r} "
                f"(U+{ord(char):04X}); nothing was written. Use characters the file's encoding "
                "has, or rewrite the whole file as UTF-8 with write_file."
            ) from None

    def save(self, text: str) -> None:
        """Write ``text`` back atomically with the original encoding and mode.

        Through the run's FileIO port when it has one (the editor owns the
        encoding then); the change is reported to ``on_change`` afterwards.
        """
        data = self.encode(text)  # refuses unencodable text on both paths
        file_io = self.ctx.ports.file_io if self.ctx is not None else None
        if file_io is not None:
            file_io.write_text(self.path, text)
        else:
            atomic_write(self.path, data, self.mode)
        if self.ctx is not None:
            report_change(self.ctx, self.path, self.text, text)

    def to_file_newlines(self, s: str) -> str:
        """Convert a model-supplied string to the file's newline style."""
        s = s.replace("\r\n", "\n")
        return s.replace("\n", "\r\n") if self.newline == "\r\n" else s


def _dominant_newline(text: str) -> str:
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "\r\n" if crlf and crlf >= lf else "\n"


def check_regular_file(path: Path, shown: str) -> os.stat_result:
    """Stat ``path`` and insist on a regular file (a FIFO or device would block or never end)."""
    if path.is_dir():
        raise ToolError(f"{shown} is a directory, not a file; use ls to list it")
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ToolError(f"file not found: {shown}{near_names(path)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"{shown} is not a regular file (a device, FIFO or socket)")
    return st


def load_text(path: Path, shown: str, ctx: ToolContext | None = None) -> TextFile:
    """Read ``path`` as text; ToolError for a missing, special or binary file.

    With ``ctx`` the returned file saves through ``ctx.ports`` and reports its
    change; with a FileIO port the text comes from the editor's buffer.
    """
    if ctx is not None and ctx.ports.file_io is not None:
        text = read_text_via(ctx, path, shown)
        return TextFile(path, text, "utf-8", _dominant_newline(text), None, ctx)
    st = check_regular_file(path, shown)
    try:
        with open_regular(path) as fh:  # checked again on the descriptor: no swap window
            data = fh.read()
    except NotRegularFile:
        raise ToolError(f"{shown} is not a regular file (a device, FIFO or socket)") from None
    kind = binary_kind(data[:SNIFF_BYTES])
    if kind is not None:
        raise ToolError(f"{shown} is a binary file ({kind}); it cannot be edited as text")
    encoding = detect_encoding(data[:SNIFF_BYTES])
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        encoding = "latin-1"
        text = data.decode(encoding)
    mode = stat.S_IMODE(st.st_mode)
    return TextFile(path, text, encoding, _dominant_newline(text), mode, ctx)


def read_text_via(ctx: ToolContext, path: Path, shown: str) -> str:
    """The text of ``path`` from the run's FileIO port (the editor's view of it).

    A file that exists on disk must still be a regular text file: the editor
    would hand back a FIFO's or a binary file's bytes as text otherwise. A
    file only the editor knows (a new, unsaved buffer) is read from it alone.
    """
    file_io = ctx.ports.file_io
    assert file_io is not None
    if path.exists() or path.is_symlink():
        check_regular_file(path, shown)
        try:
            with open_regular(path) as fh:  # checked on the descriptor, as the local path does
                kind = binary_kind(fh.read(SNIFF_BYTES))
        except NotRegularFile:
            raise ToolError(f"{shown} is not a regular file (a device, FIFO or socket)") from None
        if kind is not None:
            raise ToolError(f"{shown} is a binary file ({kind}); it cannot be read as text")
    return file_io.read_text(path)


def report_change(ctx: ToolContext, path: Path, old: str | None, new: str) -> None:
    """Tell the run's ``on_change`` observer about one written file (no-op without one)."""
    observer = ctx.ports.on_change
    if observer is not None:
        observer(ctx.call_id, FileChange(path, old, new))


def near_names(path: Path) -> str:
    """A hint naming similar files in the same directory, or ""."""
    try:
        names = os.listdir(path.parent)
    except OSError:
        return ""
    import difflib  # only on a miss: not at import

    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


def _create_temp(directory: Path, name: str, perms: int) -> tuple[int, Path]:
    """Create a fresh temp file next to the target; the kernel applies the umask."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = directory / f".{name}.{os.urandom(4).hex()}.tmp"
        try:
            return os.open(tmp, flags, perms), tmp
        except FileExistsError:
            continue


# O_PATH (Linux) needs only search permission, like a path lookup: a parent
# with mode 0711 must not become unwritable. Elsewhere O_RDONLY needs read
# permission, so a refused walk falls back to plain path operations.
_DIR_FLAGS = (
    getattr(os, "O_PATH", os.O_RDONLY)
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
)
WALK_NEEDS_READ = not hasattr(os, "O_PATH")
# Where the OS lets us walk directories by descriptor, writes never follow a symlink.
_BY_DIR_FD = (
    hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
    and {os.open, os.mkdir, os.rename, os.unlink, os.stat} <= os.supports_dir_fd
)


def open_real_dir(directory: Path) -> int:
    """Open the real (symlink-free) ``directory`` without following any symlink.

    Walks one component at a time with ``O_NOFOLLOW``, creating missing
    directories. The path came from :func:`resolve_write`, so a symlink met
    on the way was swapped in after the check (a race to redirect the write
    out of the write roots): refuse it instead of following it.
    """
    fd = os.open(directory.anchor, _DIR_FLAGS)
    try:
        for name in directory.parts[1:]:
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=fd)
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except NotADirectoryError:
                if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise PathDenied(
                        f"{directory} changed while writing (a symlink replaced a directory); "
                        "the write was refused"
                    ) from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically, creating parent directories.

    A crash leaves either the old or the new file, never half of one. An
    existing file keeps its permission bits; a new one gets 0666 minus umask.
    ``path`` must be real (from :func:`resolve_write`): on POSIX no symlink is
    followed on the way to it, so a symlink planted after the path check
    cannot redirect the write.
    """
    if _BY_DIR_FD:
        try:
            _write_in_dir(path, data, mode)
            return
        except PermissionError:
            if not WALK_NEEDS_READ:
                raise
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None and path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
    fd, tmp = _create_temp(path.parent, path.name, 0o600 if mode is not None else 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_in_dir(path: Path, data: bytes, mode: int | None) -> None:
    """:func:`atomic_write` through a descriptor of the parent directory."""
    dir_fd = open_real_dir(path.parent)
    try:
        if mode is None:
            with contextlib.suppress(FileNotFoundError):
                st = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
                mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        while True:
            tmp = f".{path.name}.{os.urandom(4).hex()}.tmp"
            try:
                fd = os.open(tmp, flags, 0o600 if mode is not None else 0o666, dir_fd=dir_fd)
                break
            except FileExistsError:
                continue
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                if mode is not None:
                    os.fchmod(fh.fileno(), mode)
                os.fsync(fh.fileno())
            os.rename(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)


_LINE = Pattern(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines with their endings; only CR, LF and CRLF end a line (unlike str.splitlines)."""
    return _LINE.findall(text)


def resolve_edit(ctx: ToolContext, path: str) -> tuple[Path, str]:
    """Resolve a path a tool both reads and writes; returns (real path, display name)."""
    real = resolve_write(ctx, path)
    resolve_read(ctx, path)  # an editor shows content, so forbid_read applies too
    return real, display_path(ctx, real)


def unified_diff(before: str, after: str, shown: str, limit_lines: int = 200) -> str:
    """A unified diff of two texts, capped at ``limit_lines`` lines."""
    import difflib  # only the editing tools' results need it: not at import

    lines = list(
        difflib.unified_diff(
            before.replace("\r\n", "\n").splitlines(keepends=True),
            after.replace("\r\n", "\n").splitlines(keepends=True),
            fromfile=f"a/{shown}",
            tofile=f"b/{shown}",
        )
    )
    if len(lines) > limit_lines:
        extra = len(lines) - limit_lines
        lines = [*lines[:limit_lines], f"... ({extra} more diff lines)\n"]
    return "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines)
