"""Running the grading tests in an isolated process, with a time limit per test.

``run_tests(tree, files, ...)`` starts ``runner.py`` in a fresh interpreter
(``python -I -B``: no environment variables such as ``PYTHONPATH`` or
``PYTEST_PLUGINS``, no user site, nothing from the working folder) with a
minimal environment (plugin autoloading off, one BLAS thread, a scratch home)
and reads its signed reports.  A test that does not report within its limit
(plus a grace period) has its process killed: it is recorded as timed out and
the tests not yet run start again in a new process, so an endless loop costs
one test.  Returns every test's reports, the tests timed out, the collection
errors, the refusals reported by the audit hook, and the processes' output.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import pathlib
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time

RUNNER = pathlib.Path(__file__).resolve().parent / "runner.py"
GRACE = 5.0                         # seconds past the per-test limit before the process is killed
COLLECT_LIMIT = 120.0               # seconds for start-up and collection
MEMORY = 8 * 2 ** 30                # the grading process's address-space cap (RLIMIT_AS), bytes


def check_pytest(python: str = sys.executable) -> None:
    """A ValueError unless ``python -I`` can import pytest (it runs the tests)."""
    run = subprocess.run([python, "-I", "-c", "import pytest"], capture_output=True, text=True)
    if run.returncode != 0:
        raise ValueError(f"grading needs pytest, which {python} cannot import: pip install pytest"
                         " (or pip install 'tinyalgo[test]')")


def _environment(scratch: pathlib.Path) -> dict:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch), "TMPDIR": str(scratch),
           "LANG": "C.UTF-8", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(scratch)}
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _reader(stream, key: bytes, out: queue.Queue):
    for raw in stream:
        try:
            outer = json.loads(raw)
            line, mac = outer["record"], outer["mac"]
        except (ValueError, KeyError, TypeError):
            continue
        if hmac.compare_digest(mac, hmac.new(key, line.encode("utf-8"), hashlib.sha256).hexdigest()):
            out.put(json.loads(line))
    out.put(None)


def _session(tree: pathlib.Path, scratch: pathlib.Path, args: list, protected: list, limit: float, python: str,
             grace: float):
    """One grading process: yields its verified records, then ("exit", output) or ("killed", output)."""
    key = secrets.token_hex(32)
    read_fd, write_fd = os.pipe()
    config = {"key": key, "fd": write_fd, "tree": str(tree), "scratch": str(scratch), "protected": protected,
              "limit": limit, "memory": MEMORY, "args": args}
    runner = tree.parent / RUNNER.name                  # a copy: the grader's own package stays unread
    shutil.copyfile(RUNNER, runner)
    proc = subprocess.Popen([python, "-I", "-B", str(runner)], cwd=tree, env=_environment(scratch),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            pass_fds=(write_fd,), start_new_session=True)
    os.close(write_fd)
    records: queue.Queue = queue.Queue()
    output = []
    threading.Thread(target=_reader, args=(os.fdopen(read_fd, "r", encoding="utf-8"), key.encode(), records),
                     daemon=True).start()
    printed = threading.Thread(target=lambda: output.append(proc.stdout.read().decode("utf-8", "replace")),
                               daemon=True)
    printed.start()
    proc.stdin.write(json.dumps(config).encode())
    proc.stdin.close()
    deadline = time.monotonic() + COLLECT_LIMIT
    while True:
        try:
            record = records.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            printed.join(grace)
            yield {"event": "killed", "output": "".join(output)}
            return
        if record is None:
            proc.wait()
            printed.join(grace)
            yield {"event": "exit", "code": proc.returncode, "output": "".join(output)}
            return
        if record["event"] in ("start", "collected"):       # the next test's time starts
            deadline = time.monotonic() + limit + grace
        yield record


def run_tests(tree, files, protected=(), limit: float = 30.0, python: str = sys.executable,
              grace: float = GRACE) -> dict:
    """Run the test ``files`` (relative to ``tree``) isolated; see the module docstring.
    Returns {"reports": {nodeid: [(when, outcome, message)]}, "timeouts": [nodeid],
    "collect_errors": [(nodeid, text)], "tampering": [(nodeid, what)], "output": str}."""
    tree = pathlib.Path(tree).resolve()
    scratch = tree / "scratch"
    scratch.mkdir(exist_ok=True)
    reports, timeouts, collect_errors, tampering, outputs = {}, [], [], [], []
    args = [str(f) for f in files]
    while True:                             # each round ends at least one test: reported, or timed out
        current, collected = None, None
        for record in _session(tree, scratch, args, [str(p) for p in protected], limit, python, grace):
            event = record["event"]
            if event == "collected":
                collected = record["nodeids"]
            elif event == "collect_error":
                collect_errors.append((record["nodeid"], record["longrepr"]))
            elif event == "start":
                current = record["nodeid"]
            elif event == "report":
                reports.setdefault(record["nodeid"], []).append((record["when"], record["outcome"],
                                                                 record["message"]))
                if record["when"] == "teardown":
                    current = None
            elif event == "tamper":
                tampering.append((record["nodeid"], record["what"]))
            elif event in ("exit", "killed"):
                outputs.append(record["output"])
                if event == "exit" and current is not None:
                    reports.setdefault(current, []).append(
                        ("call", "failed", "the grading process ended during this test"
                                           f" (exit status {record['code']})"))
                if event == "killed" and current is not None:
                    timeouts.append(current)
                elif event == "killed" and collected is None:
                    collect_errors.append(("", f"collecting the tests took more than {COLLECT_LIMIT:.0f} s"))
        if collected is None or current is None:
            break
        pending = [n for n in collected if n not in reports and n not in timeouts]
        if not pending:
            break
        args = pending
    return {"reports": reports, "timeouts": timeouts, "collect_errors": collect_errors, "tampering": tampering,
            "output": "\n".join(outputs)}
