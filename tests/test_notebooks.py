"""The tutorials' notebooks: each of ``tutorials/*.ipynb`` is exactly what
``tinyalgo notebooks`` (tinyalgo.assignments.notebook) makes from its script (a test fails if they drift).
With the ``notebooks`` extra, each runs in a real Jupyter kernel in fast mode, every cell without error and
every figure the tutorial shows inline as a PNG: on a solution copy, ``tests/test_tutorials.py``."""
import json
import pathlib
import re

import pytest

from tinyalgo.assignments.notebook import notebook, notebook_path, notebook_text, script_cells, scripts
from tinyalgo.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDER = ROOT / "tutorials"
SCRIPTS = scripts(FOLDER)


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_each_notebook_is_made_from_its_script(script):
    path = notebook_path(script)
    assert path.exists() and path.read_text(encoding="utf-8") == notebook_text(script.read_text(encoding="utf-8")), \
        f"{path.name} differs from {script.name}: run tinyalgo notebooks tutorials"


def test_cells_by_hand():
    script = ("import os\n\n"
              "# %% [markdown]\n# # Title\n#\n# Some *text*.\n\n"
              "# %%\n\nx = 1\n\n\ny = 2\n\n"
              "# %%\n\n"                                      # an empty cell: dropped
              "# %% [markdown]\n# More.\n")
    assert script_cells(script) == [("code", "import os"), ("markdown", "# Title\n\nSome *text*."),
                                     ("code", "x = 1\n\n\ny = 2"), ("markdown", "More.")]
    nb = notebook(script)
    assert (nb["nbformat"], nb["nbformat_minor"], nb["metadata"]["kernelspec"]["name"]) == (4, 5, "python3")
    assert nb["cells"][1] == {"cell_type": "markdown", "id": "cell-01", "metadata": {},
                              "source": ["# Title\n", "\n", "Some *text*."]}
    assert nb["cells"][2] == {"cell_type": "code", "id": "cell-02", "metadata": {}, "execution_count": None,
                              "outputs": [], "source": ["x = 1\n", "\n", "\n", "y = 2"]}
    assert notebook_text(script) == notebook_text(script) and json.loads(notebook_text(script)) == nb


@pytest.mark.parametrize("script,says", [
    ("# %% [markdown]\n# fine\nnot a comment\n", "line 3: a markdown cell's lines start with '# '"),
    ("# %%\nx = 1\n# %%markdown\n", "line 3: a cell starts with '# %%' or '# %% [markdown]'"),
])
def test_a_bad_line_is_named(script, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        script_cells(script, "t.py")


def test_the_command_writes_and_checks(tmp_path, capsys):
    (tmp_path / "01_a.py").write_text("# %%\nx = 1\n", encoding="utf-8")
    assert main(["notebooks", "--check", str(tmp_path)]) == 1 and "01_a.ipynb: differs" in capsys.readouterr().out
    assert not (tmp_path / "01_a.ipynb").exists()
    assert main(["notebooks", str(tmp_path)]) == 0 and main(["notebooks", "--check", str(tmp_path)]) == 0
    (tmp_path / "01_a.py").write_text("# %%\nx = 2\n", encoding="utf-8")
    assert main(["notebooks", "--check", str(tmp_path)]) == 1


def test_the_command_refuses_bad_input_before_writing(tmp_path, capsys):
    assert main(["notebooks", str(tmp_path)]) == 2
    assert f"{tmp_path}: no tutorial scripts (NN_*.py) there" in capsys.readouterr().err
    assert main(["notebooks", str(tmp_path / "none")]) == 2
    assert "no such folder" in capsys.readouterr().err
    (tmp_path / "01_a.py").write_text("# %%\nx = 1\n", encoding="utf-8")
    (tmp_path / "02_b.py").write_text("# %% [markdown]\nnot a comment\n", encoding="utf-8")
    assert main(["notebooks", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "02_b.py, line 2: a markdown cell's lines start with '# '" in err
    assert not list(tmp_path.glob("*.ipynb"))                          # not even the good script's notebook


def test_the_notebooks_are_valid_nbformat():
    nbformat = pytest.importorskip("nbformat")
    for script in SCRIPTS:
        text = notebook_path(script).read_text(encoding="utf-8")
        nbformat.validate(nbformat.reads(text, as_version=4))
        assert nbformat.writes(nbformat.reads(text, as_version=4)) + "\n" == text     # as Jupyter saves it


def test_the_tutorials_show_figures():
    assert sum(len(re.findall(r"\bshow\(", p.read_text(encoding="utf-8"))) for p in SCRIPTS) >= 4
