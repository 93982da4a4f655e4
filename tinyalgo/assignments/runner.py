"""The grading process: pytest on a grading folder, isolated from everything else.

``sandbox.run_tests`` starts this file as ``python -I -B runner.py`` (no
environment variables, no user site, no working folder on ``sys.path``, no
bytecode written) in a temporary folder that holds only what is graded: the
instructor's package with the student's bodies and the instructor's tests.
The configuration comes on standard input (read before any graded code is
imported): the folder, the tests to run, a secret key, the time limit per
test, the result descriptor, and the paths no test may read.

Before pytest starts, the process

* removes every other ``tinyalgo`` from ``sys.path`` and ``sys.meta_path``
  (an installed or editable copy), so ``import tinyalgo`` is the graded one;
* caps its memory (``RLIMIT_AS``);
* installs an audit hook (PEP 578) that refuses to start processes, load
  foreign code (``ctypes``), open sockets, write or delete files outside
  its scratch folder, and read anything under the paths it was told to
  protect (another tinyalgo, the submission, the instructor's folder); each
  refusal is reported, with the test that was running, and costs that test's
  assignment its points.

pytest runs with plugin autoloading off, the cache off and output captured
in memory.  Each report goes to the result descriptor as one JSON line with
an HMAC under the secret key, so nothing the graded code prints or writes
can pass for a result.  A test that runs past its time limit is stopped
(``SIGALRM``) and fails; the parent kills a process that does not stop.
"""
import hashlib
import hmac
import json
import os
import signal
import sys


class TimeLimit(BaseException):
    """Raised in a test that ran past its time limit (not an ``Exception``: a solution's ``except`` misses it)."""


def main():
    config = json.loads(sys.stdin.read())
    key = config["key"].encode("ascii")
    fd = config["fd"]
    tree = os.path.realpath(config["tree"])
    scratch = os.path.realpath(config["scratch"])
    protected = [os.path.realpath(p) for p in config["protected"]]
    limit = float(config["limit"])
    current = {"nodeid": None}

    def send(record):
        line = json.dumps(record, sort_keys=True)
        mac = hmac.new(key, line.encode("utf-8"), hashlib.sha256).hexdigest()
        os.write(fd, (json.dumps({"record": line, "mac": mac}) + "\n").encode("utf-8"))

    # -- no other tinyalgo: the graded folder first, every other copy gone
    def other_copy(entry):
        try:
            return os.path.realpath(entry or ".") != tree and os.path.exists(os.path.join(entry or ".", "tinyalgo"))
        except (TypeError, ValueError):
            return False
    protected += [os.path.realpath(os.path.join(p or ".", "tinyalgo")) for p in sys.path if other_copy(p)]
    sys.path[:] = [tree, os.path.join(tree, "tests")] + [p for p in sys.path if not other_copy(p)]
    finders = []
    for finder in sys.meta_path:                # an editable install's finder maps "tinyalgo" to its folder
        mapping = getattr(finder, "MAPPING", None)
        if isinstance(mapping, dict) and isinstance(mapping.get("tinyalgo"), str):
            protected.append(os.path.realpath(mapping["tinyalgo"]))
        else:
            finders.append(finder)
    sys.meta_path[:] = finders
    for name in [m for m in sys.modules if m == "tinyalgo" or m.startswith("tinyalgo.")]:
        del sys.modules[name]

    try:
        import resource
        cap = int(config["memory"])
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ImportError, ValueError, OSError):
        pass

    import pytest           # imported before the hook: its own start-up is trusted

    def inside(path, root):
        return path == root or path.startswith(root + os.sep)

    def refuse(what):
        send({"event": "tamper", "nodeid": current["nodeid"], "what": what})
        raise PermissionError(f"the grader does not allow this: {what}")

    armed = [False]                 # the hook acts while a test runs: the only time a student's body can run
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    spawn = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
             "pty.spawn", "os.startfile", "os.kill", "os.killpg", "signal.pthread_kill")
    foreign = ("ctypes.", "socket.", "sqlite3.", "urllib.", "http.", "ftplib.", "smtplib.", "webbrowser.")
    mutate = ("os.remove", "os.unlink", "os.rename", "os.replace", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
              "os.truncate", "os.symlink", "os.link", "os.utime", "shutil.", "os.chdir")

    def hook(event, args):
        if not armed[0]:
            return
        if event == "open":
            path, mode, flags = args[0], args[1], args[2]
            if not isinstance(path, (str, bytes)):
                return
            path = os.path.realpath(os.fsdecode(path))
            for root in protected:
                if inside(path, root):
                    refuse(f"read {path}, outside the graded folder (another copy of tinyalgo or the submission)")
            writing = (mode is not None and any(c in str(mode) for c in "wax+")) or \
                (mode is None and flags is not None and flags & write_flags)
            if writing and not inside(path, scratch) and path != os.devnull:
                refuse(f"write {path}")
        elif event in spawn or event.startswith(spawn):
            refuse(f"start a process ({event})")
        elif event.startswith(foreign):
            refuse(f"use {event.split('.')[0]} ({event})")
        elif event.startswith(mutate):
            paths = [os.fsdecode(a) for a in args if isinstance(a, (str, bytes))]
            allowed = tree if event == "os.chdir" else scratch
            if not all(inside(os.path.realpath(p), allowed) for p in paths):
                refuse(f"change the file system ({event})")
        elif event in ("sys.addaudithook", "sys.setprofile", "sys.settrace", "cpython.run_command"):
            refuse(f"change the interpreter ({event})")

    def on_alarm(signum, frame):
        raise TimeLimit(f"the test ran for more than {limit:g} s (the time limit per test)")

    class Reporter:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item):
            signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, limit)
            armed[0] = True
            try:
                yield
            finally:
                armed[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)

        def pytest_collection_finish(self, session):
            send({"event": "collected", "nodeids": [item.nodeid for item in session.items]})

        def pytest_collectreport(self, report):
            if report.failed:
                send({"event": "collect_error", "nodeid": report.nodeid, "longrepr": str(report.longrepr)})

        def pytest_runtest_logstart(self, nodeid, location):
            current["nodeid"] = nodeid
            send({"event": "start", "nodeid": nodeid})

        def pytest_runtest_logreport(self, report):
            message = ""
            if report.failed:
                crash = getattr(report.longrepr, "reprcrash", None)
                message = str(report.longrepr) if crash is None else crash.message
                if crash is not None and "TimeLimit" in message:
                    message = message.split("TimeLimit: ", 1)[-1]
                message = _student_lines(report, message)
            send({"event": "report", "nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
                  "message": message})

        def pytest_runtest_logfinish(self, nodeid, location):
            current["nodeid"] = None

    sys.addaudithook(hook)
    args = ["-q", "-p", "no:cacheprovider", "-p", "no:stepwise", "--capture=sys", "-o", "addopts=",
            "-o", "python_files=test_*.py", "--rootdir", tree, "-c", os.devnull, "--tb=short",
            "--import-mode=prepend"] + config["args"]
    pytest.main(args, plugins=[Reporter()])


def _student_lines(report, message: str) -> str:
    """The failure's message, then the lines of the student's code in its traceback (file:line)."""
    entries = getattr(getattr(report.longrepr, "reprtraceback", None), "reprentries", None) or []
    where = []
    for entry in entries:
        loc = getattr(getattr(entry, "reprfileloc", None), "path", None)
        line = getattr(getattr(entry, "reprfileloc", None), "lineno", None)
        loc = ("/" + loc.replace(os.sep, "/")) if loc else ""
        if "/tinyalgo/" in loc:
            where.append(f"{loc.split('/tinyalgo/', 1)[1]}:{line}")
    if where:
        message += "\n(raised in tinyalgo/" + ", tinyalgo/".join(where) + ")"
    return message


if __name__ == "__main__":
    main()
