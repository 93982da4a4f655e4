"""The worker process that runs a submission, and the walls around it.

``Worker(tree, protected)`` starts ``worker.py`` on the grading folder
``tree`` (the handed-out package with the student's bodies, ``worker.py``,
``wire.py``, ``probes.py``) and ``call(probe, args)`` sends it one request
and returns its answer, with the CPU time it took.  The grader holds every
test, every expected value and the report; the worker holds none of them.

Confinement (``confinement()`` says which one a grade ran under):

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

import functools
import json
import os
import pathlib
import re
import select
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import time

import numpy as np

from tinyalgo.assignments import wire

HERE = pathlib.Path(__file__).resolve().parent
WORKER_FILES = ("worker.py", "wire.py", "probes.py")
NOBODY = 65534
MEMORY = 4 * 2 ** 30               # the worker's address space, bytes
OUTPUT = 2 ** 20                   # what the worker may print, bytes
REPLY = 256 * 2 ** 20              # the largest answer read, bytes
SCRATCH = 64 * 2 ** 20             # the scratch folder under bubblewrap, bytes
START = 60.0                       # seconds for a worker to start and import NumPy


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


def interpreter() -> str:
    """The Python binary itself (a virtual environment's ``python`` is a link to it)."""
    return os.path.realpath(sys.executable)


def site_folders() -> list:
    """Every site-packages folder this Python could add (hidden from the worker)."""
    found = set(site.getsitepackages()) | {site.getusersitepackages(), sysconfig.get_paths()["purelib"],
                                           sysconfig.get_paths()["platlib"]}
    return sorted(p for p in found if p and os.path.isdir(p))


def numpy_folders() -> list:
    """NumPy's package folder and its bundled libraries' folder (``numpy.libs``), if any."""
    package = pathlib.Path(np.__file__).resolve().parent
    return [p for p in (package, package.parent / "numpy.libs") if p.is_dir()]


# A seccomp filter (classic BPF, ``struct sock_filter``) for ``bwrap --seccomp``: no new process in the
# sandbox (fork, vfork, clone without CLONE_THREAD: EPERM; clone3: ENOSYS, so the C library falls back to
# clone); threads are allowed.  The filter is what stops a process there: the hook is Python, and
# RLIMIT_NPROC does not bind a sandbox whose uid maps to root.
_SYSCALLS = {"x86_64": (0xC000003E, {"fork": 57, "vfork": 58, "clone": 56, "clone3": 435}),
             "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435})}


def seccomp_program() -> bytes | None:
    """The filter for this machine's architecture, or None where it is not known."""
    import platform
    import struct
    if platform.machine() not in _SYSCALLS:
        return None
    arch, nr = _SYSCALLS[platform.machine()]
    load, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06             # BPF_LD|W|ABS, BPF_JMP|JEQ|K, JSET|K, BPF_RET|K
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    deny = [nr[k] for k in ("fork", "vfork") if k in nr]
    n = len(deny)
    code = [(load, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, eperm), (load, 0, 0, 0)]     # arch, then the number
    # then, after the n denials (a jump skips jt instructions): clone3? clone? allow; load the flags;
    # CLONE_THREAD? eperm enosys allow
    code += [(jeq, n + 4 - i, 0, d) for i, d in enumerate(deny)]
    code += [(jeq, 5, 0, nr["clone3"]), (jeq, 1, 0, nr["clone"]), (ret, 0, 0, allow),
             (load, 0, 0, 16), (jset, 2, 0, 0x00010000), (ret, 0, 0, eperm), (ret, 0, 0, enosys),
             (ret, 0, 0, allow)]
    return b"".join(struct.pack("<HBBI", *c) for c in code)


def _seccomp_fd() -> int | None:
    """A pipe's read end holding ``seccomp_program()`` (one per bwrap: it reads it to the end), or None."""
    program = seccomp_program()
    if program is None:
        return None
    read, write = os.pipe()
    os.write(write, program)
    os.close(write)
    return read


def _bwrap_command(tree: pathlib.Path, seccomp: int | None = None) -> list:
    cmd = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all", "--unshare-user", "--disable-userns",
           "--uid", str(NOBODY), "--gid", str(NOBODY), "--cap-drop", "ALL", "--clearenv"]
    if seccomp is not None:
        cmd += ["--seccomp", str(seccomp)]
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    prefix = os.path.realpath(sys.base_prefix)
    if not prefix.startswith("/usr/"):
        cmd += ["--ro-bind", prefix, prefix]
    for folder in site_folders():
        real = os.path.realpath(folder)
        if real.startswith((prefix + "/", "/usr/")):
            cmd += ["--tmpfs", real]
    for folder in numpy_folders():
        cmd += ["--ro-bind", str(folder), f"/site/{folder.name}"]
    cmd += ["--ro-bind", str(tree), "/grading", "--size", str(SCRATCH), "--tmpfs", "/scratch",
            "--proc", "/proc", "--dev", "/dev", "--chdir", "/scratch"]
    for key, value in _environment("/scratch").items():
        cmd += ["--setenv", key, value]
    return cmd


def _stdlib() -> list:
    """The folders of Python's standard library (what a fallback worker may read besides its own)."""
    paths = sysconfig.get_paths()
    return sorted({os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if os.path.isdir(paths[k])})


def _environment(scratch: str) -> dict:
    env = {"PATH": "/usr/bin:/bin", "HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


# Run before the worker's command (``exec``): resource limits, then (fallback as root) uid 65534.  A separate
# interpreter rather than ``preexec_fn``, which is unsafe in a grader that runs threads (``grade_all``).
LAUNCH = """
import json, os, resource, signal, sys
cfg = json.loads(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
for name, value in cfg["limits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
if cfg["drop"]:
    os.setgroups([])
    os.setgid(cfg["drop"])
    os.setuid(cfg["drop"])
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
os.execv(sys.argv[2], sys.argv[2:])
"""


def _launch(cmd: list, cpu_seconds: float, drop: bool) -> list:
    """``cmd`` preceded by the launcher that limits its resources (and drops to uid 65534 if ``drop``)."""
    limits = {"RLIMIT_AS": MEMORY, "RLIMIT_FSIZE": OUTPUT, "RLIMIT_CPU": max(1, int(cpu_seconds) + 1),
              "RLIMIT_NOFILE": 64, "RLIMIT_CORE": 0}
    binary = shutil.which(cmd[0]) or cmd[0]
    return [interpreter(), "-I", "-S", "-c", LAUNCH, json.dumps({"limits": limits, "drop": NOBODY if drop else 0}),
            binary] + cmd[1:]


@functools.cache
def bubblewrap_works() -> bool:
    """True when ``bwrap`` is installed and runs this Python with NumPy in the sandbox."""
    if shutil.which("bwrap") is None:
        return False
    probe = pathlib.Path(os.path.realpath(os.environ.get("TMPDIR", "/tmp")))
    seccomp = _seccomp_fd()
    cmd = _bwrap_command(probe, seccomp) + [interpreter(), "-I", "-S", "-B", "-c",
                                            "import sys; sys.path.insert(0, '/site'); import numpy"]
    try:
        return subprocess.run(cmd, capture_output=True, timeout=START,
                              pass_fds=() if seccomp is None else (seccomp,)).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        if seccomp is not None:
            os.close(seccomp)


@functools.cache
def _nobody_can_run() -> bool:
    if os.geteuid() != 0:
        return False
    try:
        check = f"import sys; sys.path.insert(0, {str(numpy_folders()[0].parent)!r}); import numpy"
        return subprocess.run(_launch([interpreter(), "-I", "-S", "-c", check], 30, True), capture_output=True,
                              cwd="/", timeout=START).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.cache
def _nobody_reads_the_reference() -> bool:
    """True when uid 65534 can read this grader's own ``tinyalgo`` (the reference solution)."""
    if os.geteuid() != 0:
        return True
    import tinyalgo
    check = f"open({str(pathlib.Path(tinyalgo.__file__).resolve().parent / 'qlearning.py')!r}).read()"
    try:
        return subprocess.run(_launch([interpreter(), "-I", "-S", "-c", check], 30, True), capture_output=True,
                              cwd="/", timeout=START).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return True


def confinement(wanted: str = "auto") -> str:
    """The confinement a worker gets.  "auto": bubblewrap where it runs, else the fallback where it can run
    the worker as uid 65534 and that user cannot read the reference solution, else a ValueError (before any
    work): otherwise only the audit hook, Python code beside the submission's, stands between the worker and
    the reference or the grader's files.  "bubblewrap" where it
    cannot run is a ValueError; "fallback" is the fallback as it can be had (the report says which)."""
    if wanted not in ("auto", "bubblewrap", "fallback"):
        raise ValueError(f"confinement {wanted!r}; allowed: auto, bubblewrap, fallback")
    if wanted == "fallback":
        return "fallback"
    if bubblewrap_works():
        return "bubblewrap"
    if wanted == "bubblewrap":
        raise ValueError("bubblewrap cannot run here (install the Debian package bubblewrap, and allow"
                         " unprivileged user namespaces); use --confinement fallback or auto")
    if not _nobody_can_run() or _nobody_reads_the_reference():
        why = (f"uid {NOBODY} cannot run {interpreter()} (the grader runs as uid {os.geteuid()})"
               if not _nobody_can_run() else f"uid {NOBODY} can read the reference solution (this tinyalgo)")
        raise ValueError(f"no confinement that holds can run here: bubblewrap cannot run and {why}; install"
                         " bubblewrap (Debian: apt-get install bubblewrap), or give --confinement fallback to grade"
                         " with only an audit hook between submissions and what the worker's user can read")
    return "fallback"


def describe(kind: str) -> str:
    """One line saying what a confinement holds the worker to."""
    if kind == "bubblewrap":
        return ("bubblewrap: uid 65534 in its own user, PID and network namespaces, no capabilities, the system"
                " read-only, only NumPy and the graded package visible, a 64 MB scratch folder, resource limits")
    hook = ("an audit hook refusing processes, sockets, foreign code, file writes and reads outside"
            " the graded package, NumPy and the standard library (no namespaces)")
    if _nobody_can_run():
        return f"fallback: a separate process as uid {NOBODY}, resource limits, {hook}"
    return (f"fallback, NOT ISOLATED: a separate process as the grader's own uid {os.geteuid()} (uid {NOBODY}"
            f" cannot run this Python), resource limits, {hook}; code that undoes the hook reaches this user's"
            " files")


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
            seccomp = _seccomp_fd()
            cmd = _bwrap_command(self.tree, seccomp) + [interpreter(), "-I", "-S", "-B", "/grading/worker.py",
                                                        json.dumps(config)]
            env, drop, cwd = {}, False, "/"
        else:
            self.scratch.mkdir(exist_ok=True)
            drop = _nobody_can_run()
            if drop:                        # the scratch folder stays the grader's: uid 65534 writes no file
                for path in (self.tree.parent, self.tree, self.scratch):
                    os.chmod(path, 0o755)
            config = {"tree": str(self.tree), "scratch": str(self.scratch),
                      "path": [str(numpy_folders()[0].parent)], "protected": self.protected, "limit": REPLY,
                      "writable": False,
                      "readable": [str(self.tree)] + [str(p) for p in numpy_folders()] + _stdlib() + ["/dev"]}
            cmd = [interpreter(), "-I", "-S", "-B", str(self.tree / "worker.py"), json.dumps(config)]
            env, cwd, seccomp = _environment(str(self.scratch)), str(self.scratch), None
        try:
            with open(self.output, "ab") as out:
                self.proc = subprocess.Popen(_launch(cmd, self.cpu_seconds, drop), stdin=subprocess.PIPE,
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
