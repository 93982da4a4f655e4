"""The worker process that runs a submission, and the walls around it.

``Worker(tree, protected)`` starts ``worker.py`` on the grading folder
``tree`` (the handed-out package with the student's bodies, ``worker.py``,
``wire.py``, ``probes.py``) and ``call(probe, args)`` sends it one request
and returns its answer, with the CPU time it took.  The grader holds every
test, every expected value and the report; the worker holds none of them.

Confinement (``confinement.py``; ``confinement()`` says which one a grade ran under):

``bubblewrap``  the worker runs in new user, PID, network, IPC, UTS and
                cgroup namespaces as uid 65534 with no capabilities; it sees
                the system's ``/usr``, ``/lib``, ``/bin`` and the Python
                installation read-only with every site-packages folder
                hidden, NumPy alone at ``/site``, the grading folder
                read-only at ``/grading`` and a small scratch folder (tmpfs):
                no network, no other file, no other process.
``fallback``    where bubblewrap is not installed or cannot run: a separate
                process in its own session, as uid 65534 if the grader is
                root and the interpreter is readable by it; the audit hook
                of ``worker.py`` refuses processes, sockets, foreign code,
                every file write and reads of the protected paths.

Both add resource limits (``setrlimit``): address space, CPU seconds, file
size (what the worker prints is capped by it too) and open files; a call that
runs past its time limit has the worker killed (the next call starts a new
one).  Answers are read with the size limits of ``wire.py``.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import select
import shutil
import signal
import subprocess
import time


from tinyalgo.assignments import wire
from tinyalgo.assignments.confinement import (NOBODY, START, bubblewrap_works, bwrap_command,  # noqa: F401
                                              confinement, describe, environment, interpreter, launch,
                                              nobody_can_run, numpy_folders, seccomp_fd, site_folders,
                                              stdlib_folders)

HERE = pathlib.Path(__file__).resolve().parent
WORKER_FILES = ("worker.py", "wire.py", "probes.py")
REPLY = 256 * 2 ** 20              # the largest answer read, bytes


# What a terminal or a viewer would act on rather than show: C0 and C1 controls (escape sequences, carriage
# return, backspace), line and paragraph separators and the bidirectional overrides.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str, newlines: bool = True) -> str:
    """``text`` with every control character written as an escape (``\\x1b``); newlines and tabs are kept if
    ``newlines``, else escaped too.  What the submission says reaches a report only through this."""
    text = _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)
    return text if newlines else text.replace("\n", "\\n").replace("\t", "\\t")


class WorkerError(Exception):
    """A call that produced no answer: the worker timed out, died, or broke the wire format."""


class StudentError(Exception):
    """The student's code raised: ``kind``, ``message``, ``where`` (tinyalgo/...:line)."""

    def __init__(self, kind: str, message: str, where: list):
        super().__init__(f"{kind}: {message}")
        self.kind, self.message, self.where = kind, message, where


def _children(pid: int) -> list:
    found = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return found


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and its descendants, from /proc, the children each
    has waited for included (a child that did the work and was reaped counts)."""
    total, todo, tick = 0.0, [pid], os.sysconf("SC_CLK_TCK")
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15]) / tick      # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            continue
        todo += _children(p)
    return total


def _reader(fd: int, deadline: float):
    """``read(n)`` on ``fd`` that raises TimeoutError once ``deadline`` (time.monotonic) has passed."""
    def read(n):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError
        return os.read(fd, min(n, 2 ** 20))
    return read


class Worker:
    """A worker process on the grading folder ``tree``, started on the first call.

    kind : "bubblewrap" or "fallback" (``confinement``).  protected : paths
    the fallback's audit hook refuses to read.  cpu_seconds : the worker's
    CPU cap (RLIMIT_CPU).  scratch : the fallback's scratch folder."""

    def __init__(self, tree, kind: str, protected=(), cpu_seconds: float = 120.0, scratch=None):
        self.tree = pathlib.Path(tree).resolve()
        self.kind, self.protected, self.cpu_seconds = kind, [str(p) for p in protected], cpu_seconds
        self.scratch = pathlib.Path(scratch) if scratch else self.tree.parent / "scratch"
        self.proc, self.output = None, self.tree.parent / "worker-output.txt"
        self.started = 0

    def _start(self):
        if self.kind == "bubblewrap":
            config = {"tree": "/grading", "scratch": "/scratch", "path": ["/site"], "protected": [],
                      "limit": REPLY}
            seccomp = seccomp_fd()
            cmd = bwrap_command(self.tree, seccomp) + [interpreter(), "-I", "-S", "-B", "/grading/worker.py",
                                                        json.dumps(config)]
            env, drop, cwd = {}, False, "/"
        else:
            self.scratch.mkdir(exist_ok=True)
            drop = nobody_can_run()
            if drop:                        # the scratch folder stays the grader's: uid 65534 writes no file
                for path in (self.tree.parent, self.tree, self.scratch):
                    os.chmod(path, 0o755)
            config = {"tree": str(self.tree), "scratch": str(self.scratch),
                      "path": [str(numpy_folders()[0].parent)], "protected": self.protected, "limit": REPLY,
                      "writable": False,
                      "readable": [str(self.tree)] + [str(p) for p in numpy_folders()] + stdlib_folders() + ["/dev"]}
            cmd = [interpreter(), "-I", "-S", "-B", str(self.tree / "worker.py"), json.dumps(config)]
            env, cwd, seccomp = environment(str(self.scratch)), str(self.scratch), None
        try:
            with open(self.output, "ab") as out:
                self.proc = subprocess.Popen(launch(cmd, self.cpu_seconds, drop), stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=out, env=env, cwd=cwd,
                                             start_new_session=True, pass_fds=() if seccomp is None else (seccomp,))
        finally:
            if seccomp is not None:
                os.close(seccomp)
        self.started += 1
        try:                                # the worker says it is ready before any submitted code can run
            ready = wire.decode(*wire.read_frame(_reader(self.proc.stdout.fileno(), time.monotonic() + START), 4096))
        except (TimeoutError, EOFError, OSError, wire.WireError, ValueError, KeyError):
            ready = None
        if ready != {"ready": True}:
            self.close()
            raise WorkerError(f"the worker did not start within {START:g} s")

    def close(self):
        """Stop the worker (its whole process group)."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                stream.close()
            self.proc = None

    def cpu(self) -> float:
        return tree_cpu(self.proc.pid) if self.proc is not None else 0.0

    def call(self, probe: str, args: dict, timeout: float) -> tuple:
        """(answer, CPU seconds) of ``probes.<probe>(**args)`` in the worker;
        StudentError if the student's code raised, WorkerError (worker killed)
        if no answer came within ``timeout`` seconds or it was malformed."""
        if self.proc is None:
            self._start()
        request = wire.encode({"probe": probe, "args": args})
        before = self.cpu()
        deadline = time.monotonic() + timeout
        read = _reader(self.proc.stdout.fileno(), deadline)
        try:
            self.proc.stdin.write(request)
            self.proc.stdin.flush()
            header, body = wire.read_frame(read, REPLY)
            reply = wire.decode(header, body)
        except TimeoutError:
            self.close()
            raise WorkerError(f"no answer within {timeout:g} s (an endless loop?); the worker was stopped") from None
        except (BrokenPipeError, EOFError, OSError):
            code = self.proc.poll() if self.proc else None
            self.close()
            raise WorkerError(f"the worker ended during the call (exit status {code})") from None
        except (wire.WireError, ValueError, KeyError) as err:
            self.close()
            raise WorkerError(f"the answer broke the wire format ({err})") from None
        seconds = self.cpu() - before
        if not isinstance(reply, dict) or not ({"ok"} == set(reply) or {"error"} == set(reply)):
            self.close()
            raise WorkerError("the answer is not {ok} or {error}")
        if "error" in reply:
            e = reply["error"]
            if not (isinstance(e, dict) and isinstance(e.get("type"), str) and isinstance(e.get("message"), str)):
                raise WorkerError("the error report is malformed")
            where = [w for w in e.get("where", []) if isinstance(w, str)][:5]
            raise StudentError(printable(e["type"][:100], newlines=False), printable(e["message"][:2000]),
                               [printable(w, newlines=False) for w in where])
        return reply["ok"], seconds

    def printed(self, limit: int = 4000) -> str:
        """The last ``limit`` characters the worker printed."""
        try:
            return printable(self.output.read_bytes()[-limit:].decode("utf-8", "replace"))
        except OSError:
            return ""


def prepare(tree: pathlib.Path) -> None:
    """Copy the worker's own files into the grading folder ``tree``."""
    for name in WORKER_FILES:
        shutil.copyfile(HERE / name, tree / name)
