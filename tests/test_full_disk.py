"""Outputs on a full disk: the commands check the free space their files need
before any work, and a write that fails anyway names its file, keeps what was
there and leaves no temporary file.  The file system is made small in two
ways that need no privileges: ``shutil.disk_usage`` reporting little room
(the checks), and RLIMIT_FSIZE making every write past a size fail (the
writes)."""
import collections
import json
import os
import shutil
import subprocess
import sys

import pytest

from tinyalgo.cli import main

Usage = collections.namedtuple("Usage", "total used free")


@pytest.fixture
def small_disk(monkeypatch):
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10 ** 6, 10 ** 6 - 200_000, 200_000))


@pytest.mark.parametrize("argv,message", [
    (["train", "--task", "copy", "--budget", "1000", "--out", "run"],
     "--out run: 195.3 KiB free on its file system, the run's checkpoint, best model and log"),
    (["train-supervised", "--task", "copy", "--budget", "1000", "--out", "run"],
     "--out run: 195.3 KiB free on its file system"),
    (["assignment", "make", "layers", "--out", "hw"], "195.3 KiB free on its file system, the copy, the instructor's"),
])
def test_a_command_checks_the_room_its_files_need_before_any_work(small_disk, tmp_path, monkeypatch, capsys, argv,
                                                                 message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.err.count("\n") == 1 and captured.out == ""
    assert list(tmp_path.iterdir()) == []


WRITE = r"""
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)          # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
from tinyalgo.runs.fileio import atomic_write_json
try:
    atomic_write_json(sys.argv[1], {"big": "x" * 100_000})
except OSError as err:
    print(err)
"""


def test_a_failed_write_names_its_file_and_keeps_what_was_there(tmp_path):
    target = tmp_path / "log.json"
    target.write_text('{"kept": true}\n')
    run = subprocess.run([sys.executable, "-c", WRITE, str(target)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"[Errno 27] cannot write {target} (File too large); what was there is kept"
    assert json.loads(target.read_text()) == {"kept": True}
    assert os.listdir(tmp_path) == ["log.json"]                  # no temporary file left


MAKE = r"""
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))    # the package's larger modules do not fit
from tinyalgo.cli import main
sys.exit(main(["assignment", "make", "layers", "--out", sys.argv[1]]))
"""


def test_assignment_make_that_runs_out_of_room_writes_nothing_and_says_so_in_one_line(tmp_path):
    run = subprocess.run([sys.executable, "-c", MAKE, str(tmp_path / "hw")], capture_output=True, text=True,
                         timeout=120)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1, run.stderr[-2000:]
    assert lines[0].startswith(f"tinyalgo: error: cannot write the copy in {tmp_path} (") and \
        lines[0].endswith("); nothing was written") and len(lines[0]) < 200
    assert list(tmp_path.iterdir()) == []
