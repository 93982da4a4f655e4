"""A sweep's finished runs on disk, loose or packed into one file.

A sweep (``tinyalgo.experiments.table1``) writes the log of each finished run
to ``<out>/runs/<name>.json`` and keeps the run's other results beside its
checkpoint in ``<out>/runs/<name>/`` (Figure 5's tests of the final model,
``figure5.json``).  ``pack`` puts all of them into one file per sweep,
``<out>/runs.jsonl.gz``: gzip JSON Lines, one run a line,

    {"name": "<run name>", "log": {...}, "files": {"figure5.json": [...]}}

sorted by name, the same bytes for the same runs ("files" only when the run
folder holds JSON files).  The readers take a run's loose files where they
exist and its packed line otherwise, so the tables are rebuilt (``--summarize``)
and the finished runs of a sweep are skipped from either.  The checkpoints are
not packed: a packed run is finished, its model gone unless its run folder is
still there.
"""
from __future__ import annotations

import copy
import functools
import gzip
import json
import os

from tinyalgo.qtraining import RunState
from tinyalgo.runs.checkpoint import load_checkpoint
from tinyalgo.runs.config import QConfig
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.runs.rundir import checkpoint_path
from tinyalgo.runs.schema import Field, check, dataclass_schema, options_schema

ARCHIVE = "runs.jsonl.gz"
FRACTION = Field("number", minimum=0, maximum=1)
# One evaluation of a run's final report (``QTrainer.final_report``) or of Figure 5's tests (figure5.json).
EVALUATION = {"complexity": Field("int", minimum=1), "instances": Field("int", minimum=1), "solved": FRACTION,
              "char_accuracy": FRACTION, "mean_char_accuracy": Field("number", minimum=0, maximum=1, required=False),
              "steps": Field("int", minimum=0, required=False), "length": Field("int", minimum=1, required=False),
              "tested": Field("bool", required=False),
              "drawn": Field("list", items=Field("int", minimum=1), required=False)}
# A curriculum record (``Curriculum.record``).
VALIDATION = {"level": Field("int", minimum=1), "solved": FRACTION, "advanced": Field("bool"),
              "chars": Field("int", minimum=0), "seconds": Field("number", minimum=0),
              "test_solved": Field("number", minimum=0, maximum=1, required=False),
              "confirm_solved": Field("number", minimum=0, maximum=1, required=False)}
# A finished run's log: its final report (the run's state without its generator and curriculum, which the
# history replaces), the validations' count and its progress lines.
RUN_STATE = {**dataclass_schema(RunState), "rng": Field("dict", required=False),
             "curriculum": Field("dict", required=False)}
RUN_LOG = {"config": Field("dict", schema=options_schema(QConfig)), "run": Field("dict", schema=RUN_STATE),
           "evaluations": Field("list", items=Field("dict", schema=EVALUATION)),
           "history": Field("list", items=Field("dict", schema=VALIDATION)),
           "validations": Field("int", minimum=0, required=False), "log": Field("list", required=False)}
FILES = {"figure5.json": Field("list", items=Field("dict", schema=EVALUATION))}


def checked_log(log, where: str):
    """``log`` if it follows ``RUN_LOG`` (a FileFormatError naming ``where`` and the field otherwise)."""
    check(log, RUN_LOG, where)
    return log


def checked_file(filename: str, data, where: str):
    """A run folder's JSON file ``data`` if it follows its schema (``FILES``; others are not checked)."""
    if filename in FILES and data is not None:
        check({filename: data}, {filename: FILES[filename]}, where)
    return data


def archive_path(out_dir) -> str:
    """The packed runs of the sweep folder ``out_dir``."""
    return os.path.join(out_dir, ARCHIVE)


@functools.lru_cache(maxsize=8)
def _read(path: str, stamp: tuple) -> dict:
    """{name: line} of a packed file (``stamp``: its modification time and size, so a new file is read again)."""
    entries = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                entry = json.loads(line)
                entries[entry["name"]] = entry
            except (ValueError, KeyError, TypeError):
                raise ValueError(f"{path}, line {n}: not a packed run ({{\"name\": ..., \"log\": ...}})") from None
    return entries


def packed(out_dir) -> dict:
    """{name: {"name", "log", "files"?}} of the runs packed in ``out_dir``; empty without a packed file."""
    path = archive_path(out_dir)
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return {}
    try:
        return copy.deepcopy(_read(os.path.abspath(path), (stat.st_mtime_ns, stat.st_size)))
    except (OSError, EOFError) as err:
        raise ValueError(f"{path} cannot be read as gzip JSON Lines ({err})") from None


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def loose_names(out_dir) -> list:
    """The names of the runs whose log is a loose file ``<out_dir>/runs/<name>.json``, sorted."""
    folder = os.path.join(out_dir, "runs")
    if not os.path.isdir(folder):
        return []
    return sorted(name[:-5] for name in os.listdir(folder)
                  if name.endswith(".json") and os.path.isfile(os.path.join(folder, name)))


def run_logs(out_dir) -> dict:
    """{name: log} of every finished run of ``out_dir``, loose or packed (a loose log wins), sorted by name;
    each checked against ``RUN_LOG``."""
    logs = {name: checked_log(entry["log"], f"{archive_path(out_dir)} ({name})")
            for name, entry in packed(out_dir).items()}
    for name in loose_names(out_dir):
        path = os.path.join(out_dir, "runs", name + ".json")
        logs[name] = checked_log(_load(path), path)
    return dict(sorted(logs.items()))


def _split(folder: str) -> tuple:
    """(sweep folder, run name) of a run folder ``<out>/runs/<name>``."""
    folder = os.path.normpath(folder)
    return os.path.dirname(os.path.dirname(folder)), os.path.basename(folder)


def _entry(folder: str):
    """The packed line of run folder ``folder``; None if there is none or a loose log of another run replaced it."""
    out_dir, name = _split(folder)
    entry = packed(out_dir).get(name)
    if entry is not None and os.path.isfile(folder + ".json") and _load(folder + ".json") != entry["log"]:
        return None
    return entry


def run_log(folder: str):
    """The log of the finished run in run folder ``folder`` (``<out>/runs/<name>``): the loose
    ``<folder>.json``, else its packed line's; None if the run is not finished."""
    if os.path.isfile(folder + ".json"):
        return checked_log(_load(folder + ".json"), folder + ".json")
    entry = _entry(folder)
    return None if entry is None else checked_log(entry["log"], log_source(folder))


def log_source(folder: str) -> str:
    """Where ``run_log(folder)`` reads from, for messages: the loose file, or the packed file and the run's name."""
    if os.path.isfile(folder + ".json"):
        return folder + ".json"
    out_dir, name = _split(folder)
    return f"{archive_path(out_dir)} ({name})"


def run_file(folder: str, filename: str):
    """The JSON file ``filename`` of run folder ``folder``: loose, else packed with the run; None if neither."""
    path = os.path.join(folder, filename)
    if os.path.isfile(path):
        return checked_file(filename, _load(path), path)
    entry = _entry(folder)
    return None if entry is None else checked_file(filename, entry.get("files", {}).get(filename),
                                                   f"{log_source(folder)}, {filename}")


def pack(out_dir) -> list:
    """Write ``<out_dir>/runs.jsonl.gz`` with every finished run of ``out_dir``: those already packed, and
    every loose log ``runs/<name>.json`` with the JSON files of its folder ``runs/<name>/`` (a loose file
    replaces its packed copy; a loose log that differs from the packed one replaces the run and its files).
    Nothing loose is removed.  The names of the runs packed."""
    entries = packed(out_dir)
    for name in loose_names(out_dir):
        folder = os.path.join(out_dir, "runs", name)
        log, old = _load(folder + ".json"), entries.get(name)
        files = dict(old.get("files", {})) if old is not None and old["log"] == log else {}
        if os.path.isdir(folder):
            for filename in sorted(os.listdir(folder)):
                if filename.endswith(".json") and os.path.isfile(os.path.join(folder, filename)):
                    files[filename] = _load(os.path.join(folder, filename))
        entries[name] = dict(name=name, log=log, **({"files": dict(sorted(files.items()))} if files else {}))
    if not entries:
        raise ValueError(f"no run logs in {os.path.join(out_dir, 'runs')} to pack")
    text = "".join(json.dumps(entries[name], separators=(",", ":")) + "\n" for name in sorted(entries))
    atomic_write_bytes(archive_path(out_dir), gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    return sorted(entries)


def final_models(out_dir, names) -> dict:
    """{name: controller} of the final models ``<out_dir>/runs/<name>/checkpoint.npz`` of the runs ``names``,
    every one loaded before any is used; a ValueError names the first that is missing or unreadable (the
    models are not packed: the sweep folder that trained the runs has them)."""
    models = {}
    for name in names:
        path = checkpoint_path(os.path.join(out_dir, "runs", name))
        if not os.path.isfile(path):
            raise ValueError(f"{path} is missing: give as --out the sweep folder that trained the runs (their"
                             " final models are not packed)")
        models[name] = load_checkpoint(path)[0]
    return models
