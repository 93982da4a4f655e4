"""Sphinx configuration of tinyalgo's documentation site (docs/about.md says why this stack).

Build it strictly, as CI does:

    pip install -e ".[docs]"
    sphinx-build -W --keep-going -b html docs build/site

Three kinds of page are made at build time from the repository, so that they follow the code:

- ``api/``: one page per module of the paper layer (``tinyalgo/*.py`` and ``tinyalgo.tasks``) and one per
  subpackage (the names of its ``__all__``, or every public function and class of its modules), found by
  walking the package: a module added or removed changes the reference with no edit here;
- ``tutorials/``: the committed notebooks ``tutorials/*.ipynb``, refused when one differs from its script
  (``tinyalgo notebooks --check``), executed by myst-nb in the tutorials' fast mode (``TINYALGO_FAST=1``); a
  cell that raises fails the build;
- ``guides/_instructor_readme.md``: the README that ``tinyalgo assignment make`` writes for an instructor.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))

import tinyalgo  # noqa: E402
from apigen import write_api_pages  # noqa: E402

project = "tinyalgo"
author = "the tinyalgo authors"
copyright = "the tinyalgo authors, MIT licence"
release = version = tinyalgo.__version__

extensions = [
    "myst_nb",                      # markdown pages (MyST) and notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
    "sphinx.ext.mathjax",
    "verbatim_docstrings",          # docs/verbatim_docstrings.py
]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md", "jupyter_execute"]
root_doc = "index"
html_theme = "pydata_sphinx_theme"
html_title = f"tinyalgo {version}"
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}
html_context = {"default_mode": "auto"}   # the theme's light/dark mode before a reader picks one
html_sidebars = {"index": [], "install": [], "about": []}
html_show_sourcelink = False

# MyST: heading anchors so that [text](page.md#a-heading) links are checked, as GitHub renders them.
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_ref_domains = ["std"]               # [text](#target) links resolve to headings and labels, not to Python names
suppress_warnings = ["myst.header"]      # the pages' first heading is a level-1 title; sections may skip levels

# Autodoc: members in source order; a docstring that is not valid reStructuredText is shown as written.
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_typehints = "none"
autosummary_generate = False
# Optional extras: their modules are documented without installing them.
autodoc_mock_imports = [m for m in ("stable_baselines3", "sb3_contrib", "torch", "aalpy", "dask", "distributed",
                                    "moviepy", "gymnasium")
                        if __import__("importlib.util").util.find_spec(m) is None]

# myst-nb: the tutorials are executed at build time, in fast mode, and a failing cell fails the build.
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 600
nb_execution_in_temp = True
nb_merge_streams = True
os.environ["TINYALGO_FAST"] = "1"       # read by the kernel the tutorials run in (its environment is ours)
os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
# The kernel imports the checkout being documented, not whichever tinyalgo is installed.
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])


def _copy_tutorials() -> None:
    """The committed notebooks, copied into the site's tutorials folder; refused when one differs from its script."""
    from tinyalgo.assignments.notebook import stale

    stale_paths = stale(str(ROOT / "tutorials"))
    if stale_paths:
        raise RuntimeError(f"{', '.join(map(str, stale_paths))}: differs from its script; "
                           "run `tinyalgo notebooks` and commit the notebooks")
    out = DOCS / "tutorials"
    out.mkdir(exist_ok=True)
    for old in out.glob("*.ipynb"):
        old.unlink()
    for nb in sorted((ROOT / "tutorials").glob("[0-9]*.ipynb")):
        shutil.copyfile(nb, out / nb.name)


def _instructor_readme() -> None:
    """guides/_instructor_readme.md: the README an instructor's folder gets, for every assignment."""
    from tinyalgo.assignments.make import instructor_readme
    from tinyalgo.assignments.registry import ASSIGNMENTS

    text = instructor_readme(list(ASSIGNMENTS.values()), solution=False, out="handout", instructor="instructor")
    lines = text.splitlines()
    # The generated README starts at level 1; on the site it is a section of the instructors' guide.
    text = "\n".join(("#" + line) if line.startswith("#") else line for line in lines) + "\n"
    (DOCS / "guides" / "_instructor_readme.md").write_text(text, encoding="utf-8")


def _html_anchors_as_labels(app, docname, source) -> None:
    """``## <a id="x"></a>Title`` (an anchor GitHub renders and docstrings cite) becomes a MyST label ``x``."""
    source[0] = re.sub(r'^(#+) <a id="([\w-]+)"></a>', r"(\2)=\n\1 ", source[0], flags=re.M)


def _repo_url() -> str:
    """The repository's address, as setup.cfg declares it (project_urls, Source)."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    urls = dict(line.split("=", 1) for line in cfg["metadata"]["project_urls"].strip().splitlines())
    return {k.strip(): v.strip() for k, v in urls.items()}["Source"]


REPO_BLOB = _repo_url() + "/blob/main/"
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def _links_of_included_files(app, relative_path, parent_docname, content) -> None:
    """A file of the repository included in a page (benchmarks/README.md, the tables of figures/) links to its
    neighbours relative to its own folder: its images are made relative to the page, its links to files go to
    the repository on GitHub (they are not pages of the site)."""
    path = (pathlib.Path(app.srcdir) / relative_path).resolve()
    page_dir = (pathlib.Path(app.srcdir) / parent_docname).parent

    def fix(m):
        bang, text, target = m.groups()
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            return m.group(0)
        where, _, anchor = target.partition("#")
        full = (path.parent / where).resolve()
        if bang:
            return f"{bang}[{text}]({os.path.relpath(full, page_dir)})"
        rel = full.relative_to(ROOT).as_posix()
        return f"[{text}]({REPO_BLOB}{rel}{'#' + anchor if anchor else ''})"

    content[0] = LINK.sub(fix, content[0])


def _skip_namedtuple_fields(app, what, name, obj, skip, options):
    """A NamedTuple's fields are named in its docstring; their generated "Alias for field number N" says nothing."""
    if (getattr(obj, "__doc__", None) or "").startswith("Alias for field number"):
        return True
    return None


def setup(app):
    app.connect("source-read", _html_anchors_as_labels)
    app.connect("autodoc-skip-member", _skip_namedtuple_fields)
    app.connect("include-read", _links_of_included_files)


def _assignments_table() -> None:
    """guides/_assignments.md: the assignments as ``tinyalgo assignment list`` shows them."""
    from tinyalgo.assignments.registry import ASSIGNMENTS

    rows = [f"| {a.name} | {', '.join(f'`{f.qualname}`' for f in a.functions)} | {a.total} | "
            f"[{a.tutorial}](../tutorials.md) | {a.minutes} min |" for a in ASSIGNMENTS.values()]
    text = ("| assignment | functions | points | tutorial | expected time |\n|---|---|---|---|---|\n"
            + "\n".join(rows) + "\n")
    (DOCS / "guides" / "_assignments.md").write_text(text, encoding="utf-8")


_copy_tutorials()
_instructor_readme()
_assignments_table()
write_api_pages(DOCS / "api")
exclude_patterns += ["guides/_instructor_readme.md", "guides/_assignments.md"]
