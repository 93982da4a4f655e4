"""The worker: the only process that runs a submission's code.

``sandbox.Worker`` starts this file as ``python -I -S -B worker.py CONFIG``
inside the confinement (bubblewrap, or the fallback: see ``sandbox.py``),
from a folder that holds the handed-out package with the student's bodies
spliced in, this file, ``wire.py`` and ``probes.py``.  It holds no key, no
test, no expected value and no result channel: it reads a request frame on
standard input (``{"probe": name, "args": {...}}``), runs ``probes.<name>``
and writes the answer frame (``{"ok": answer}`` or ``{"error": {...}}``) on
the pipe that was its standard output.  Whatever the student's code prints
goes to standard error.  The grader checks every answer itself.

Before any submitted code runs the worker puts the graded package first on
``sys.path``, imports the handed-out modules (their module-level code is
the instructor's; a student's code is only the bodies of marked functions)
and, as a second layer behind the operating system's,
installs an audit hook (PEP 578) that refuses to start processes, open
sockets, load foreign code, write outside the scratch folder, or read the
paths it was told to protect.
"""
import json
import os
import sys
import traceback

BLOCKED_IMPORTS = ("_posixsubprocess", "_ctypes", "ctypes", "_socket", "socket", "_multiprocessing",
                   "multiprocessing", "subprocess", "pty", "_ssl", "ssl")
SPAWN = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
         "pty.spawn", "os.kill", "os.killpg", "signal.pthread_kill")
MUTATE = ("os.remove", "os.unlink", "os.rename", "os.replace", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
          "os.truncate", "os.symlink", "os.link", "os.utime", "shutil.")


# Imported before the hook: NumPy and the handed-out modules the probes call into.  Only the bodies of the
# marked functions are the student's, and they run when a probe calls them, with the hook in place.
PRELOAD = ("numpy", "tinyalgo", "tinyalgo.layers", "tinyalgo.cores", "tinyalgo.controller_config",
           "tinyalgo.controller", "tinyalgo.bptt", "tinyalgo.tasks", "tinyalgo.curriculum", "tinyalgo.qlearning",
           "tinyalgo.automata.machine", "tinyalgo.automata.minimise")


# What the hook also refuses: the garbage collector's lists (a way to reach an object the worker removed, such
# as the process-starting function ``main`` sets to None) and tracing.
INTROSPECTION = ("gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.setprofile", "sys.settrace",
                 "sys.addaudithook")


def install_hook(scratch: str, protected: list, readable: list = (), writable: bool = True) -> None:
    """Install the audit hook described in the module docstring.  It cannot be removed: from here on
    every event of the process, the student's code and the worker's own, passes through it.  ``readable``:
    if given, the only folders a file may be read from (scratch always may); ``writable``: whether files
    may be written in scratch.

    The hook runs beside the student's code, which can rebind any module attribute (``os.path.abspath``,
    ``builtins.any``) and reach the hook's own frame through the traceback of an error it raised.  So it
    looks nothing up at call time: every name it uses is a C function, a type or a string bound here, paths
    are resolved with ``lstat`` and ``readlink`` (not ``os.path.realpath``, which is Python), a path given
    as anything but ``str``, ``bytes`` or a descriptor is refused, and replacing a function's code or
    defaults is refused."""
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    lstat, readlink, getcwd, devnull = os.lstat, os.readlink, os.getcwd, os.devnull
    encoding = sys.getfilesystemencoding()
    exact, to_str, decode, and_ = type, str.__str__, bytes.decode, int.__and__
    refuse, failure = PermissionError, OSError
    is_a, text, raw, number = isinstance, str, bytes, int
    blocked, spawn, mutate, introspection = BLOCKED_IMPORTS, SPAWN, MUTATE, INTROSPECTION  # bound here, not looked up
    code_attributes = ("__code__", "__defaults__", "__kwdefaults__")
    scratch, protected, readable = str(scratch), tuple(str(p) for p in protected), tuple(str(p) for p in readable)

    def resolve(path):
        """The absolute path of ``path`` (str, bytes or a subclass) with every link followed, by system calls."""
        if is_a(path, raw):
            path = decode(path, encoding, "surrogateescape")
        elif is_a(path, text):
            path = to_str(path)                 # the characters themselves, whatever a subclass says
        else:
            raise refuse("the grader allows file paths as str or bytes only")
        if not path.startswith("/"):
            path = getcwd() + "/" + path
        todo, out, links = path.split("/")[::-1], "", 0
        while todo:
            part = todo.pop()
            if part in ("", "."):
                continue
            if part == "..":
                out = out[:out.rfind("/")]
                continue
            candidate = out + "/" + part
            try:
                is_link = and_(lstat(candidate).st_mode, 0o170000) == 0o120000
            except failure:
                is_link = False
            if not is_link:
                out = candidate
                continue
            links += 1
            if links > 40:
                raise refuse(f"the grader does not allow {path} (too many links)")
            target = readlink(candidate)
            if target.startswith("/"):
                out = ""
            todo.extend(target.split("/")[::-1])
        return out or "/"

    def inside(path, roots):
        for root in roots:
            if path == root or path.startswith(root + "/"):
                return True
        return False

    def hook(event, args):
        if event in introspection:
            raise refuse(f"the grader does not allow {event}")
        if event == "object.__setattr__" and exact(args[1]) is text and args[1] in code_attributes:
            raise refuse(f"the grader does not allow replacing {args[1]}")
        if event == "open":
            path, mode, flags = args[0], args[1], args[2]
            if exact(path) is number:
                return
            path = resolve(path)
            if inside(path, protected):
                raise refuse(f"the grader does not allow reading {path}")
            if mode is not None and not is_a(mode, text):
                raise refuse("the grader allows a file mode as str only")
            writing = (mode is not None and ("w" in to_str(mode) or "a" in to_str(mode) or "x" in to_str(mode)
                                             or "+" in to_str(mode))) or \
                (mode is None and flags is not None and and_(flags, write_flags) != 0)
            if writing and not (writable and inside(path, (scratch,))) and path != devnull:
                raise refuse(f"the grader does not allow writing {path}")
            if readable and not inside(path, (scratch,)) and not inside(path, readable):
                raise refuse(f"the grader does not allow reading {path}")
        elif event == "import" and to_str(args[0]).split(".")[0] in blocked:
            raise refuse(f"the grader does not allow importing {args[0]}")
        elif event.startswith(spawn):
            raise refuse(f"the grader does not allow starting a process ({event})")
        elif event.startswith(("socket.", "ctypes.", "sys.remote_exec")):
            raise refuse(f"the grader does not allow {event}")
        elif event.startswith(mutate):
            for a in args:
                if is_a(a, (text, raw)) and not (writable and inside(resolve(a), (scratch,))):
                    raise refuse(f"the grader does not allow changing the file system ({event})")

    sys.addaudithook(hook)


def student_lines(err: BaseException, tree: str) -> list:
    """The ``tinyalgo/...:line`` places of the graded package in ``err``'s traceback."""
    where = []
    for frame in traceback.extract_tb(err.__traceback__):
        name = os.path.realpath(frame.filename)
        if name.startswith(tree + os.sep + "tinyalgo" + os.sep):
            where.append(f"{name[len(tree) + 1:]}:{frame.lineno}")
    return where


def main() -> None:
    config = json.loads(sys.argv[1])
    tree = os.path.realpath(config["tree"])
    reply_fd = os.dup(1)                     # the answers' pipe; fd 1 (print) now goes to standard error
    request_fd = os.dup(0)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    sys.path[:] = [tree] + [p for p in config["path"] if p] + [p for p in sys.path if p.startswith(sys.base_prefix)]
    sys.dont_write_bytecode = True
    import importlib

    import probes
    import wire
    for name in PRELOAD:                    # the handout's module-level code is the instructor's: run it first
        importlib.import_module(name)
    for module, name in (("_posixsubprocess", "fork_exec"), ("subprocess", "_fork_exec")):
        if module in sys.modules:           # starts a process with no audit event of its own
            setattr(sys.modules[module], name, None)
    install_hook(os.path.realpath(config["scratch"]), [os.path.realpath(p) for p in config["protected"]],
                 [os.path.realpath(p) for p in config.get("readable", [])], config.get("writable", True))
    os.chdir(config["scratch"])
    os.write(reply_fd, wire.encode({"ready": True}))      # before any submitted code runs
    reader = os.fdopen(request_fd, "rb", buffering=0)
    while True:
        try:
            header, body = wire.read_frame(reader.read, config["limit"])
        except EOFError:
            return
        request = wire.decode(header, body)
        try:
            probe = getattr(probes, request["probe"])
            answer = wire.encode({"ok": probe(**request["args"])})
        except BaseException as err:        # the student's code raised: say what and where
            try:
                message = str(err)[:2000]
            except BaseException:
                message = "(the exception's message could not be read)"
            answer = wire.encode({"error": {"type": type(err).__name__, "message": message,
                                            "where": student_lines(err, tree)}})
        view = memoryview(answer)
        while view:
            view = view[os.write(reply_fd, view):]


if __name__ == "__main__":
    main()
