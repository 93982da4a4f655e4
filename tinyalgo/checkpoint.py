"""Checkpoints: a controller's parameters, its configuration, a format
version and JSON metadata in one ``.npz``, written atomically (a temporary
file in the same directory, then a rename), so an interrupted save never
destroys the previous file.  Loading checks everything and names the file
and the problem."""
from __future__ import annotations

import io
import json
import zipfile

import numpy as np

from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.fileio import atomic_write_bytes

FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used."""


def save_checkpoint(path, controller: Controller, extra: dict = None) -> None:
    """Write ``controller`` (and JSON-able ``extra``) to ``path``."""
    header = dict(format="tinyalgo-checkpoint", version=FORMAT_VERSION, config=controller.config.to_dict(),
                  extra=extra or {})
    buffer = io.BytesIO()
    np.savez(buffer, __header__=np.array(json.dumps(header)),
             **{f"param/{k}": v for k, v in controller.params.items()})
    atomic_write_bytes(path, buffer.getvalue())


def load_checkpoint(path):
    """Read a checkpoint; returns (controller, extra).  Raises CheckpointError."""
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
        archive = np.load(io.BytesIO(data), allow_pickle=False)
        arrays = {name: archive[name] for name in archive.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as err:
        fail(f"not a readable .npz archive (truncated or corrupted?): {err}")
    if "__header__" not in arrays:
        fail("no tinyalgo header (not a tinyalgo checkpoint)")
    try:
        header = json.loads(str(arrays.pop("__header__")))
    except json.JSONDecodeError:
        fail("its header is not valid JSON")
    if header.get("format") != "tinyalgo-checkpoint":
        fail("not a tinyalgo checkpoint")
    if header.get("version") != FORMAT_VERSION:
        fail(f"format version {header.get('version')!r}, this tinyalgo reads version {FORMAT_VERSION}")
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
    return Controller(config, params={k: params[k] for k in expected}), header.get("extra", {})
