"""Every tutorial runs top to bottom as a plain script, in its fast mode, and
checks with ``assert`` the results it teaches (so a tutorial whose text no
longer matches the package fails here)."""
import ast
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


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_tutorial_asserts_what_it_teaches(path):
    asserts = [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Assert)]
    assert len(asserts) >= 3, f"{path.name} checks {len(asserts)} results; a tutorial states and asserts its outputs"


def test_a_failed_claim_fails_the_run(tmp_path, monkeypatch):
    fake = tmp_path / "09_wrong.py"
    fake.write_text("# %%\nimport numpy as np\n\nassert np.sum([1, 2]) == 4, 'the text says 4'\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="the text says 4"):
        test_tutorial_runs(fake, monkeypatch, tmp_path)


def test_there_are_tutorials():
    assert len(TUTORIALS) >= 6          # 01 to 06: the paper from the tasks to an extracted automaton
