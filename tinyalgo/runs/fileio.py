"""Files written atomically: a temporary file in the same directory, flushed
to disk, then renamed over the target, so an interrupted write never destroys
what was there before.

A temporary file is named ``.tinyalgo-tmp.<host>.<pid>.<target>.<random>``:
one left behind by a process that was killed mid-write (kill -9, a power
cut) is recognised by its prefix and removed by the next write to the same
folder, or by ``remove_stale_temporaries`` when a run starts, once no
process of that id runs on this host.  A temporary file of a running
process (another worker of a sweep writing next to it) is left alone."""
from __future__ import annotations

import io
import json
import os
import socket
import tempfile

TEMP_PREFIX = ".tinyalgo-tmp."


def _host() -> str:
    return (socket.gethostname().replace(".", "-") or "host")[:32]


TARGET_CHARS = 32     # of the target's name in a temporary name: a long target name still leaves room


def temporary_prefix(target_name: str) -> str:
    """The prefix of this process's temporary files for a target called
    ``target_name`` (its first ``TARGET_CHARS`` characters), short enough for
    any name the file system takes."""
    return f"{TEMP_PREFIX}{_host()}.{os.getpid()}.{target_name[:TARGET_CHARS]}."


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:                 # exists, owned by someone else
        return True
    return True


def remove_stale_temporaries(folder) -> list:
    """Remove the temporary files in ``folder`` left by killed processes of this
    host; returns their paths."""
    removed, host = [], _host()
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(TEMP_PREFIX):
            continue
        parts = name[len(TEMP_PREFIX):].split(".", 2)
        if len(parts) < 3 or parts[0] != host or not parts[1].isdigit() or _running(int(parts[1])):
            continue
        path = os.path.join(folder, name)
        try:
            os.unlink(path)
            removed.append(path)
        except OSError:
            pass
    return removed


class NotAFileError(OSError):
    """The target of a write exists and is not a regular file (a folder, device, FIFO or socket)."""


def not_a_file(path) -> str | None:
    """What ``path`` is when it exists and is not a regular file (following
    symbolic links): "a folder", "a device, FIFO or socket"; else None."""
    if os.path.isdir(path):
        return "a folder"
    if os.path.exists(path) and not os.path.isfile(path):
        return "a device, FIFO or socket"
    return None


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically.  A symbolic link is followed:
    the file it points to is written (its temporary file in that file's
    folder) and the link kept.  A target that exists and is not a regular
    file raises NotAFileError, and is left as it is."""
    shown = os.fspath(path)
    kind = not_a_file(shown)
    if kind is not None:
        raise NotAFileError(f"cannot write {shown}: it is {kind}, not a regular file; give a file name")
    path = os.path.realpath(shown)
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    remove_stale_temporaries(folder)
    fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(os.path.basename(path)), suffix=".tmp", dir=folder)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)                 # mkstemp makes 0600 files; a saved file is ordinary
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(err, OSError) and not err.filename:     # a failed write names no file: name the target
            raise OSError(err.errno, f"cannot write {shown} ({err.strerror}); what was there is kept") from None
        raise


def atomic_write_json(path, obj) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    atomic_write_bytes(path, (json.dumps(obj, indent=1, sort_keys=False) + "\n").encode())


def atomic_savefig(fig, path, **kwargs) -> None:
    """Save the matplotlib figure ``fig`` to ``path`` atomically (``kwargs``
    as ``Figure.savefig``; the format from the file's extension)."""
    buffer = io.BytesIO()
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".") or "png"
    fig.savefig(buffer, format=fmt, **kwargs)
    atomic_write_bytes(path, buffer.getvalue())
