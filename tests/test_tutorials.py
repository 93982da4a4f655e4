"""Every tutorial runs top to bottom as a plain script, in its fast mode."""
import pathlib
import runpy

import pytest

TUTORIALS = sorted(pathlib.Path(__file__).resolve().parent.parent.joinpath("tutorials").glob("[0-9]*.py"))


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_tutorial_runs(path, monkeypatch, tmp_path):
    monkeypatch.setenv("TINYALGO_FAST", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(path), run_name="__main__")


def test_there_are_tutorials():
    assert len(TUTORIALS) >= 1
