"""Checkpoints round-trip bit for bit; every bad file is refused by name."""
import json
import os

import numpy as np
import pytest

from tinyalgo.runs.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from tinyalgo.controller import Controller, ControllerConfig


def make(core="gru", units=6, dtype="float32"):
    return Controller(ControllerConfig((5, 5, 2, 5, 3), 8, 6, core=core, units=units, dtype=dtype),
                      rng=np.random.default_rng(0))


@pytest.mark.parametrize("core", ["ff", "gru", "lstm"])
def test_round_trip_is_bit_identical(tmp_path, core):
    ctrl = make(core)
    path = tmp_path / "c.npz"
    save_checkpoint(path, ctrl, {"task": "copy", "chars": 123})
    loaded, extra = load_checkpoint(path)
    assert extra == {"task": "copy", "chars": 123} and loaded.config == ctrl.config
    obs = np.random.default_rng(1).integers(0, 2, size=(4, 5))
    a = ctrl.infer(obs, ctrl.initial_state(4))
    b = loaded.infer(obs, loaded.initial_state(4))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "c.npz"
    save_checkpoint(path, make(), {"v": 1})
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        save_checkpoint(path, make(units=9), {"v": 2})
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["c.npz"]          # no temporary file left behind


def rewrite(path, mutate):
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    mutate(arrays)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


@pytest.mark.parametrize("damage,message", [
    (lambda p: p.unlink(), "no such file"),
    (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "not a readable .npz archive"),
    (lambda p: p.write_bytes(b"garbage" * 10), "not a readable .npz archive"),
    (lambda p: rewrite(p, lambda a: a.pop("__header__")), "no tinyalgo header"),
    (lambda p: rewrite(p, lambda a: a.update(__header__=np.array(json.dumps(
        dict(json.loads(str(a["__header__"])), version=99))))), "format version 99"),
    (lambda p: rewrite(p, lambda a: a.update({"param/q.w": np.zeros((3, 3), np.float32)})),
     r"parameter q.w has shape \(3, 3\), its configuration needs \(6, 8\)"),
    (lambda p: rewrite(p, lambda a: a.pop("param/q.b")), "missing \\['q.b'\\]"),
])
def test_bad_files_are_rejected_by_name(tmp_path, damage, message):
    path = tmp_path / "c.npz"
    save_checkpoint(path, make())
    damage(path)
    with pytest.raises(CheckpointError, match=message) as err:
        load_checkpoint(path)
    assert str(path) in str(err.value)


def test_an_array_declared_larger_than_its_file_is_refused_before_it_is_allocated(tmp_path):
    import io
    import zipfile
    path = tmp_path / "c.npz"
    save_checkpoint(path, make())
    header = io.BytesIO()                      # a .npy header declaring 10^5 x 10^5 float64 (80 GB), no data
    np.lib.format.write_array_header_1_0(header, dict(descr="<f8", fortran_order=False, shape=(10 ** 5, 10 ** 5)))
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("param/huge.npy", header.getvalue())
    with pytest.raises(CheckpointError, match=f"checkpoint {path}: not a readable .npz archive: its array param/huge"
                                              " declares more bytes than the file holds"):
        load_checkpoint(path)
