"""Checkpoints: a controller's parameters, its configuration, a format
version and JSON metadata in one ``.npz``, written atomically (a temporary
file in the same directory, then a rename), so an interrupted save never
destroys the previous file.  Loading checks everything and names the file
and the problem."""
from __future__ import annotations

import io
import json
import math
import zipfile

import numpy as np

from tinyalgo.controller import Controller, ControllerConfig, layout_mismatch
from tinyalgo.environment import Environment
from tinyalgo.qtraining import RunState
from tinyalgo.runs.config import QConfig, SupervisedConfig
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.runs.schema import Field, FileFormatError, check, dataclass_schema, options_schema

FORMAT_VERSION = 1


# The header's schema; a run's ``extra`` holds its mode, its configuration (the options of that mode's
# config class) and, for Q-learning, where the run stands (RunState); other entries are free.  A run's best
# tested model (best.npz) has the mode "qlearning-best".
HEADER = {"format": Field("str", choices=("tinyalgo-checkpoint",)), "version": Field("int"),
          "config": Field("dict"), "extra": Field("dict")}
RUN_CONFIGS = {"qlearning": QConfig, "qlearning-best": QConfig, "supervised": SupervisedConfig}


def check_header(header, where: str) -> None:
    """A FileFormatError unless ``header`` follows ``HEADER`` and its run's
    configuration and state follow theirs (see ``tinyalgo.runs.schema``)."""
    check(header, HEADER, where)
    extra = header["extra"]
    check(extra, {"mode": Field("str", choices=tuple(RUN_CONFIGS), required=False)}, where, "extra",
          extra_fields=True)
    mode = extra.get("mode")
    if mode and "config" in extra:
        check(extra["config"], options_schema(RUN_CONFIGS[mode]), where, "extra.config")
    if mode == "qlearning" and "run" in extra:
        check(extra["run"], dataclass_schema(RunState), where, "extra.run")


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used."""


def save_checkpoint(path, controller: Controller, extra: dict | None = None) -> None:
    """Write ``controller`` (and ``extra``, a dict of JSON values) to ``path``.
    A ValueError (``CheckpointError``) before anything is written for what
    ``load_checkpoint`` would refuse: no controller, an ``extra`` that is not
    a dict of JSON values, or whose run configuration or state does not
    follow its schema."""
    def fail(problem):
        raise CheckpointError(f"cannot save checkpoint {path}: {problem}")

    if not isinstance(controller, Controller):
        fail(f"controller must be a tinyalgo Controller; got {type(controller).__name__}")
    if extra is not None and not isinstance(extra, dict):
        fail(f"extra must be a dict of JSON values (or None); got {type(extra).__name__}")
    header = dict(format="tinyalgo-checkpoint", version=FORMAT_VERSION, config=controller.config.to_dict(),
                  extra=extra or {})
    try:
        text = json.dumps(header)
    except (TypeError, ValueError) as err:
        fail(f"extra must be a dict of JSON values (strings, numbers, booleans, None, lists, dicts): {err}")
    try:
        check_header(json.loads(text), f"cannot save checkpoint {path}")
    except FileFormatError as err:
        raise CheckpointError(str(err)) from None
    buffer = io.BytesIO()
    np.savez(buffer, __header__=np.array(text),
             **{f"param/{k}": v for k, v in controller.params.items()})
    atomic_write_bytes(path, buffer.getvalue())


def _oversized_member(data: bytes) -> str | None:
    """The name of the first array of the .npz ``data`` whose header declares
    more bytes than its member of the archive holds (loading it would
    allocate them first), else None."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            with archive.open(info) as f:
                version = np.lib.format.read_magic(f)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, _, dtype = read_header(f)
                if math.prod(shape) * dtype.itemsize > info.file_size:
                    return info.filename.removesuffix(".npy")
    return None


def load_checkpoint(path, task: str | None = None, base: int | None = None):
    """Read a checkpoint; returns (controller, extra).  Raises CheckpointError,
    also for parameters that are not finite (a diverged run) and, given the
    ``task`` and ``base`` a caller asks for, for a checkpoint trained on
    another task or base, or whose observation fields, actions or symbols do
    not fit that task's environment."""
    def fail(problem):
        raise CheckpointError(f"checkpoint {path}: {problem}")

    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        fail("no such file")
    except OSError as err:
        fail(f"cannot be read ({err.strerror})")
    try:
        oversized = _oversized_member(data)            # checked before np.load allocates what it declares
        if not oversized:
            archive = np.load(io.BytesIO(data), allow_pickle=False)
            arrays = {name: archive[name] for name in archive.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as err:
        fail(f"not a readable .npz archive (not a checkpoint, or truncated or corrupted: {type(err).__name__})")
    if oversized:
        fail(f"not a readable .npz archive: its array {oversized} declares more bytes than the file holds (corrupted)")
    if "__header__" not in arrays:
        fail("no tinyalgo header (not a tinyalgo checkpoint)")
    try:
        header = json.loads(str(arrays.pop("__header__")))
    except json.JSONDecodeError:
        fail("its header is not valid JSON")
    if not isinstance(header, dict):
        fail(f"its header is a JSON {type(header).__name__}, not an object (not a tinyalgo checkpoint)")
    if header.get("format") != "tinyalgo-checkpoint":
        fail("not a tinyalgo checkpoint")
    if header.get("version") != FORMAT_VERSION:
        fail(f"format version {header.get('version')!r}, this tinyalgo reads version {FORMAT_VERSION}")
    try:
        check_header(header, f"checkpoint {path}")
    except FileFormatError as err:
        raise CheckpointError(str(err)) from None
    try:
        config = ControllerConfig(**header["config"])
    except (KeyError, TypeError, ValueError) as err:
        fail(f"bad controller configuration: {err}")
    params = {k[len("param/"):]: v for k, v in arrays.items() if k.startswith("param/")}
    expected = config.param_shapes()
    missing = sorted(set(expected) - set(params))
    unexpected = sorted(set(params) - set(expected))
    if missing or unexpected:
        fail(f"parameters do not match its configuration (missing {missing}, unexpected {unexpected})")
    for name, (shape, _, _) in expected.items():
        if params[name].shape != tuple(shape):
            fail(f"parameter {name} has shape {params[name].shape}, its configuration needs {tuple(shape)}")
        if params[name].dtype != np.dtype(config.dtype):
            fail(f"parameter {name} is {params[name].dtype}, its configuration says {config.dtype}")
        bad = int(params[name].size - np.isfinite(params[name]).sum())
        if bad:
            fail(f"parameter {name} has {bad} NaN or infinite values (a run that diverged); it cannot be used")
    extra = header["extra"]                      # a dict (check_header)
    saved = extra.get("config") if isinstance(extra.get("config"), dict) else {}
    if task is not None or base is not None:
        check_task(fail, config, saved, task, base)
    controller = Controller(config, params={k: params[k] for k in expected})
    if isinstance(saved.get("task"), str):
        controller.task = (saved["task"], saved.get("base", 10))
    return controller, extra


def check_task(fail, config: ControllerConfig, saved: dict, task: str, base: int) -> None:
    """``fail`` unless a controller of ``config`` (trained with the run config ``saved``) fits ``task`` in ``base``."""
    saved_task, saved_base = saved.get("task"), saved.get("base", 10 if "task" in saved else None)
    if task is not None and saved_task is not None and task != saved_task:
        fail(f"trained on {saved_task}, not on {task}: leave out --task or give {saved_task}")
    if base is not None and saved_base is not None and base != saved_base:
        fail(f"trained in base {saved_base}, not in base {base}: leave out --base or give {saved_base}")
    task, base = task or saved_task, base or saved_base or 10
    if task is None:
        return
    mismatch = layout_mismatch(config, Environment(task, batch_size=1, base=base))
    if mismatch:
        name, have, need = mismatch
        fail(f"its controller has {name} {have}, {task} in base {base} needs {need}")
