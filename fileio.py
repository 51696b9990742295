"""How files are read and written: JSON lines as every file here writes them, JSONL read with
errors naming path:line, resumable output files, summary files written atomically, and sha256."""
from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import itertools
import json
import os
import stat
import sys
import tempfile
import zlib
from typing import IO, Any, Iterator

from cli import EXIT_BAD_INPUT, EXIT_OK, InputError


def dumps(obj: Any) -> str:
    """One JSON line as every file here writes it: UTF-8 text, no NaN, no default=str."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False)


# The longest line a JSONL reader takes. A LongMemEval case holds its whole haystack on one
# line (about half a megabyte in its S version, several in M); a line past this is not a case or
# a record but a file that never ends a line (/dev/zero read as a dataset took all memory).
MAX_LINE_BYTES = 64 * 2**20


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"key {twice!r} appears twice in one object")
    return obj


def loads(text: str | bytes) -> Any:
    """JSON as the standard defines it, which Python's reader does not hold to: NaN, Infinity
    and -Infinity are refused (every writer here refuses them, so a value read would fail at the
    first write), a key twice in one object is refused (the reader would keep the last and say
    nothing), and nesting too deep for the reader is a ValueError, not a RecursionError. Every
    error is a ValueError; json.JSONDecodeError's position is kept when it has one."""
    try:
        return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_refuse_duplicates)
    except RecursionError:
        raise ValueError("nested deeper than the JSON reader allows") from None


def json_error(e: ValueError) -> str:
    """A loads() error for a message: json's own with its column, else ours."""
    if isinstance(e, json.JSONDecodeError):
        return f"{e.msg} (column {e.colno})"
    return str(e)


def lines(fh: IO[bytes], path: str) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) for each line of a binary file, each at most MAX_LINE_BYTES (an
    InputError naming the line past it)."""
    for lineno in itertools.count(1):
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise InputError(f"{path}:{lineno}: a line longer than {MAX_LINE_BYTES // 2**20} MiB; not a JSONL file")
        yield lineno, raw


def decode_line(raw: bytes, path: str, lineno: int) -> str:
    """One line of a file as text; bytes that are not UTF-8 are an InputError naming the line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}:{lineno}: bytes that are not UTF-8 at column {e.start + 1} "
                         f"(byte 0x{raw[e.start]:02x}); save the file as UTF-8") from None


def not_utf8_error(path: str) -> InputError:
    """The error for a file a text reader failed to decode: scans its bytes for the first line
    that is not UTF-8, so the message names path:line (the text reader only knows a chunk)."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                decode_line(raw, path, lineno)
            except InputError as e:
                return e
    return InputError(f"{path}: bytes that are not UTF-8")


# What a damaged gzip file raises while it is read: a bad header, a cut end, corrupt data.
GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


def open_data(path: str) -> IO[bytes]:
    """A data file's bytes to read: decompressed as they are read when its name ends .gz (the
    dataset's frozen releases are stored so), as they are otherwise."""
    try:
        return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None


def damaged_gzip(path: str, e: Exception) -> InputError:
    """The error for a .gz file that cannot be read to its end."""
    return InputError(f"{path}: not a whole gzip file ({type(e).__name__}: {e or 'cut short'}); fetch or copy it "
                      f"again")


def read_jsonl(path: str) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line; a bad line is an InputError. A .gz
    file is read decompressed (open_data)."""
    try:
        yield from _read_jsonl(path)
    except GZIP_ERRORS as e:
        raise damaged_gzip(path, e) from None


def _read_jsonl(path: str) -> Iterator[tuple[int, dict]]:
    with open_data(path) as fh:
        for lineno, raw in lines(fh, path):
            line = decode_line(raw, path, lineno)
            if not line.strip():
                continue
            try:
                obj = loads(line)
            except ValueError as e:
                raise InputError(f"{path}:{lineno}: invalid JSON: {json_error(e)}") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            yield lineno, obj


def read_resumable(path: str) -> tuple[list[tuple[int, dict, str]], int]:
    """The records of an output file a stage is resuming, as (line number, object, line with
    its newline), and how many lines were cut. A last line without its newline is what a
    killed writer leaves: it is dropped and counted. Any other unreadable line is an error,
    since the file was then not written by this stage."""
    if not os.path.exists(path):
        return [], 0
    with open(path, "rb") as fh:
        text = [decode_line(raw, path, lineno) for lineno, raw in lines(fh, path)]
    out, cut = [], 0
    for lineno, line in enumerate(text, 1):
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except ValueError:
            if lineno == len(text) and not line.endswith("\n"):
                cut += 1
                continue
            raise InputError(f"{path}:{lineno}: invalid JSON inside an output file; it was not written by "
                             f"this script: use --fresh or another --out") from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{lineno}: expected a JSON object; use --fresh or another --out")
        out.append((lineno, obj, line if line.endswith("\n") else line + "\n"))
    return out, cut


# The process's umask, read once at import (reading it means setting it, which is not safe
# from worker threads): files written atomically get the permissions open() would give them.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def read_json(path: str, what: str, fields: tuple = ()) -> dict:
    """A JSON summary another stage wrote (a manifest, scores, checks), with the fields the
    reader needs; anything else is an InputError naming the file and the fix."""
    try:
        with open(path, encoding="utf-8") as fh:
            obj = loads(fh.read())
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    except ValueError as e:
        raise InputError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise InputError(f"{path}: expected a JSON object (the {what})")
    missing = [f for f in fields if f not in obj]
    if missing:
        raise InputError(f"{path}: not the {what} (no field '{missing[0]}'); rerun the script that writes it")
    return obj


# Where the output locks live (output_lock): beside the caches, never in runs/ or results/.
LOCK_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".cache", "locks")
# Folders whose entries are the kernel's or devices, never a file a stage may write.
SYSTEM_FOLDERS = ("/proc", "/sys", "/dev")


def output_path(path: str, flag: str) -> str:
    """`path` as a file a stage may write, or InputError naming the flag: not a directory, a
    device, a FIFO or a socket (an atomic rewrite would replace it with a regular file: as root,
    `--out /dev/null` turned /dev/null into one), not under /proc, /sys or /dev, and in a folder
    that is a folder. Checked before any work, so nothing is spent on a run that cannot be kept."""
    real = os.path.realpath(path)
    system = next((f for f in SYSTEM_FOLDERS if real == f or real.startswith(f + os.sep)), None)
    if system is not None:
        raise InputError(f"{flag} {path}: is under {system}, not a file to write; name a file under runs/ or "
                         f"results/")
    if os.path.isdir(real):
        raise InputError(f"{flag} {path}: is a directory; name a file in it")
    if os.path.lexists(real) and not stat.S_ISREG(os.stat(real).st_mode):
        raise InputError(f"{flag} {path}: is not a regular file (a device, a FIFO or a socket); name a file under "
                         f"runs/ or results/")
    folder = os.path.dirname(real)
    parent = folder
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise InputError(f"{flag} {path}: {parent} is not a folder")
    return path


@contextlib.contextmanager
def output_lock(path: str) -> Iterator[None]:
    """Hold `path`'s writer lock for the block: a second process that asks for it while it is
    held is refused at once (InputError naming the holder's pid and command), so two stages
    never append to one file. The lock is an flock on a file under .cache/locks/ named by the
    sha256 of the path's real location; the kernel releases it when its holder ends, however it
    ends, so no stale lock is left to clear."""
    os.makedirs(LOCK_DIR, exist_ok=True)
    lock = os.path.join(LOCK_DIR, sha256_text(os.path.realpath(path))[:32] + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", errors="replace").strip() or "a process"
            raise InputError(f"{path}: another process is writing it ({holder}); wait for it to end, or write "
                             f"elsewhere") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {' '.join(sys.argv)[:300]!r}".encode("utf-8"), 0)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "w") -> Iterator[IO]:
    """A file written atomically: yields a temp file in the same folder ("w" text in UTF-8, or
    "wb"), which replaces `path` only when the block ends without an exception. The file gets
    the permissions open() would give it (mkstemp's temp files are private to their owner), so
    every output is readable like the others."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.lexists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        raise InputError(f"{path}: is not a regular file; it is never replaced")
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as fh:
            yield fh
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_atomic(path: str, data: str | bytes) -> None:
    """Write a whole file, text or bytes, atomically (atomic_open)."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)


def check_generated(path: str, text: str, command: str) -> int:
    """A data generator's --check: EXIT_OK when path holds exactly text, else EXIT_BAD_INPUT with
    the reason on stderr (command: how to regenerate it)."""
    try:
        with open(path, encoding="utf-8") as fh:
            on_disk = fh.read()
    except OSError as e:
        print(f"error: {path}: cannot open: {e.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if on_disk != text:
        print(f"error: {path}: differs from the generator output; rerun {command}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"{path}: matches")
    return EXIT_OK


JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def indented_json(obj: Any, depth: int = 0) -> str:
    """json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=2) byte for byte, the format of
    every summary file (write_json_atomic), at `depth` levels in. With an indent, json runs its
    pure-Python encoder, a third of score.py's fixed cost at 12,000 question rows; here json's C
    encoder writes each container of scalars, with the newline and indent in its item separator,
    and a list of such dicts (the question rows) in one call, its rows' boundaries (`},` then a
    newline, found nowhere else in it) indented afterwards."""
    kind = type(obj)
    if obj and (kind is list or kind is dict):
        inner, deeper = "\n" + "  " * (depth + 1), "\n" + "  " * (depth + 2)
        if JSON_SCALARS.issuperset(map(type, obj.values() if kind is dict else obj)):
            text = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=("," + inner, ": ")).encode(obj)
            return text[0] + inner + text[1:-1] + inner[:-2] + text[-1]
        if kind is list and all(type(x) is dict and x and JSON_SCALARS.issuperset(map(type, x.values())) for x in obj):
            text = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=("," + deeper, ": ")).encode(obj)
            rows = text[2:-2].replace("}," + deeper + "{", inner + "}," + inner + "{" + deeper)
            return "[" + inner + "{" + deeper + rows + inner + "}" + inner[:-2] + "]"
        if kind is list:
            return "[" + inner + ("," + inner).join([indented_json(x, depth + 1) for x in obj]) + inner[:-2] + "]"
        if all(type(k) is str for k in obj):
            items = [f"{json.encoder.encode_basestring(k)}: {indented_json(v, depth + 1)}" for k, v in obj.items()]
            return "{" + inner + ("," + inner).join(items) + inner[:-2] + "}"
    # Anything else (an empty container, a scalar, keys that are not strings) as json writes it:
    # every newline of json's output is its own, so the indent of the levels above is added after each.
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=2).replace("\n", "\n" + "  " * depth)


def write_json_atomic(path: str, obj: Any) -> None:
    """Write a JSON summary file atomically, indented for people (indented_json)."""
    write_atomic(path, indented_json(obj) + "\n")


def sha256_stream(fh: IO[bytes]) -> str:
    """Hex sha256 of what is left to read of a binary file, a MiB at a time."""
    h = hashlib.sha256()
    for chunk in iter(lambda: fh.read(1 << 20), b""):
        h.update(chunk)
    return h.hexdigest()


def sha256_file(path: str) -> str:
    """Hex sha256 of a file's bytes."""
    with open(path, "rb") as fh:
        return sha256_stream(fh)


def sha256_data(path: str) -> str:
    """Hex sha256 of a data file's content: of its decompressed bytes when it is .gz, so that a
    dataset compressed into a frozen release keeps the sha256 its results were published with."""
    if not path.endswith(".gz"):
        return sha256_file(path)
    try:
        with open_data(path) as fh:
            return sha256_stream(fh)
    except GZIP_ERRORS as e:
        raise damaged_gzip(path, e) from None


def sha256_text(text: str) -> str:
    """Hex sha256 of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
