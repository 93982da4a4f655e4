"""The walls around the worker that runs a submission: which confinement a grade gets, and how.

``confinement(wanted)`` picks one, ``describe(kind)`` says in one line what it holds the worker to (each
report carries that line), ``bwrap_command(tree)`` is the bubblewrap command line with its seccomp filter
(``seccomp_program``), ``launch(cmd, ...)`` puts the resource limits (and, for the fallback as root, uid
65534) in front of a command.  ``sandbox.Worker`` uses them; the threat model is in INSTRUCTOR.md
(``make.instructor_readme``).
"""
from __future__ import annotations

import functools
import json
import os
import pathlib
import shutil
import site
import subprocess
import sys
import sysconfig

import numpy as np

NOBODY = 65534
MEMORY = 4 * 2 ** 30               # the worker's address space, bytes
OUTPUT = 2 ** 20                   # what the worker may print, bytes
SCRATCH = 64 * 2 ** 20             # the scratch folder under bubblewrap, bytes
START = 60.0                       # seconds for a worker to start and import NumPy


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


def seccomp_fd() -> int | None:
    """A pipe's read end holding ``seccomp_program()`` (one per bwrap: it reads it to the end), or None."""
    program = seccomp_program()
    if program is None:
        return None
    read, write = os.pipe()
    os.write(write, program)
    os.close(write)
    return read


def bwrap_command(tree: pathlib.Path, seccomp: int | None = None) -> list:
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
    for key, value in environment("/scratch").items():
        cmd += ["--setenv", key, value]
    return cmd


def stdlib_folders() -> list:
    """The folders of Python's standard library (what a fallback worker may read besides its own)."""
    paths = sysconfig.get_paths()
    return sorted({os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if os.path.isdir(paths[k])})


def environment(scratch: str) -> dict:
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


def launch(cmd: list, cpu_seconds: float, drop: bool) -> list:
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
    seccomp = seccomp_fd()
    cmd = bwrap_command(probe, seccomp) + [interpreter(), "-I", "-S", "-B", "-c",
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
def nobody_can_run() -> bool:
    if os.geteuid() != 0:
        return False
    try:
        check = f"import sys; sys.path.insert(0, {str(numpy_folders()[0].parent)!r}); import numpy"
        return subprocess.run(launch([interpreter(), "-I", "-S", "-c", check], 30, True), capture_output=True,
                              cwd="/", timeout=START).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.cache
def nobody_reads_the_reference() -> bool:
    """True when uid 65534 can read this grader's own ``tinyalgo`` (the reference solution)."""
    if os.geteuid() != 0:
        return True
    import tinyalgo
    check = f"open({str(pathlib.Path(tinyalgo.__file__).resolve().parent / 'qlearning.py')!r}).read()"
    try:
        return subprocess.run(launch([interpreter(), "-I", "-S", "-c", check], 30, True), capture_output=True,
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
    if not nobody_can_run() or nobody_reads_the_reference():
        why = (f"uid {NOBODY} cannot run {interpreter()} (the grader runs as uid {os.geteuid()})"
               if not nobody_can_run() else f"uid {NOBODY} can read the reference solution (this tinyalgo)")
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
    if nobody_can_run():
        return f"fallback: a separate process as uid {NOBODY}, resource limits, {hook}"
    return (f"fallback, NOT ISOLATED: a separate process as the grader's own uid {os.geteuid()} (uid {NOBODY}"
            f" cannot run this Python), resource limits, {hook}; code that undoes the hook reaches this user's"
            " files")
