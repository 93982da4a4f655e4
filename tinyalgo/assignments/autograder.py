"""The Gradescope autograder: the zip a programming assignment takes.

Gradescope unpacks the zip into ``/autograder/source``, runs ``setup.sh``
once when it builds the image, and for each submission (the student's files
in ``/autograder/submission``) runs ``/autograder/run_autograder``, which
must write ``/autograder/results/results.json``.  The zip holds

* ``setup.sh``: installs Python with numpy and matplotlib, and bubblewrap,
  the confinement of the worker that runs the submission (``sandbox.py``);
* ``run_autograder``: ``tinyalgo assignment grade`` on the submission with
  the instructor's tests, ``--format gradescope``; a submission it cannot
  grade at all still gets a ``results.json`` (score 0, the reason);
* ``tests/``: the instructor's tests folder (tests, ``points.json``,
  ``manifest.json``, ``handout/``);
* ``tinyalgo-src/``: the grading package (the instructor's tinyalgo), on
  ``PYTHONPATH`` for the grader only; the graded process never sees it.

``AUTOGRADER_ROOT`` (default ``/autograder``) and ``TINYALGO_PYTHON``
(default the image's ``python3``) let the same script run in a scratch
folder shaped like ``/autograder``.
"""
from __future__ import annotations

import io
import pathlib
import shutil
import zipfile

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope image set-up: Python with what tinyalgo's grader needs, and bubblewrap to confine submissions.
set -euo pipefail
apt-get update
apt-get install -y bubblewrap
if ! command -v python3 >/dev/null; then
    apt-get install -y python3 python3-pip
fi
python3 -m pip install --break-system-packages 'numpy>=1.21' 'matplotlib>=3.3' 2>/dev/null || \\
    python3 -m pip install 'numpy>=1.21' 'matplotlib>=3.3'
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Grade /autograder/submission with the instructor's tests; write /autograder/results/results.json.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PY="${TINYALGO_PYTHON:-python3}"
mkdir -p "$ROOT/results"
if ! PYTHONPATH="$ROOT/source/tinyalgo-src" "$PY" -m tinyalgo assignment grade "$ROOT/submission" \\
        --tests "$ROOT/source/tests" --json "$ROOT/results/results.json" --format gradescope \\
        > "$ROOT/results/grader.log" 2>&1; then
    "$PY" - "$ROOT/results/results.json" "$ROOT/results/grader.log" <<'PYTHON'
import json, sys
log = open(sys.argv[2], encoding="utf-8", errors="replace").read()[-4000:]
json.dump({"score": 0.0, "output": "The submission could not be graded:\\n" + log, "tests": []},
          open(sys.argv[1], "w", encoding="utf-8"))
PYTHON
fi
cat "$ROOT/results/grader.log"
"""


def _add_tree(z: zipfile.ZipFile, folder: pathlib.Path, prefix: str) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            z.write(path, f"{prefix}/{path.relative_to(folder).as_posix()}")


def _add_text(z: zipfile.ZipFile, name: str, text: str, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, text)


def write_gradescope(instructor: pathlib.Path, package: pathlib.Path, tests: pathlib.Path, chosen) -> pathlib.Path:
    """Write ``instructor/autograder.zip`` from the instructor's ``tests`` folder and the grading
    ``package`` (a tinyalgo directory); returns its path."""
    path = instructor / "autograder.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        _add_text(z, "setup.sh", SETUP_SH, executable=True)
        _add_text(z, "run_autograder", RUN_AUTOGRADER, executable=True)
        _add_tree(z, tests, "tests")
        _add_tree(z, package, "tinyalgo-src/tinyalgo")
    path.write_bytes(buffer.getvalue())
    return path


def unpack(zip_path, root) -> pathlib.Path:
    """Lay the zip out as Gradescope does: ``root/source`` (its contents), ``root/run_autograder``,
    ``root/submission`` and ``root/results`` (empty).  Returns ``root``."""
    root = pathlib.Path(root)
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(root / "source")
    for name in ("run_autograder", "setup.sh"):
        (root / "source" / name).chmod(0o755)
    shutil.copyfile(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    (root / "submission").mkdir(exist_ok=True)
    (root / "results").mkdir(exist_ok=True)
    return root
