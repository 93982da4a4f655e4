"""The API reference's pages, written from the package itself at build time (docs/conf.py calls
``write_api_pages``).

- The paper layer: one page per module ``tinyalgo/*.py`` and per module of ``tinyalgo.tasks``, with every
  public function and class (autodoc: the docstrings' shapes and paper sections as written).
- Each other subpackage: one page with its public functions and classes: the names of its ``__all__``
  when it has one, otherwise those of each of its modules.

Nothing here names a module: a module added, renamed or removed changes the pages at the next build.
"""
from __future__ import annotations

import importlib
import pathlib
import pkgutil
import re

PACKAGE = "tinyalgo"
PAPER_SUBPACKAGES = ("tasks",)      # subpackages that are part of the paper layer, module by module


def _modules(package: str) -> list[str]:
    """The public modules of ``package`` and of its public subpackages, sorted, the package itself excluded."""
    pkg = importlib.import_module(package)
    names = []
    for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        names.append(info.name)
    return sorted(names)


def _title(text: str) -> str:
    return f"{text}\n{'=' * len(text)}\n"


def _first_line(module: str) -> str:
    """The first sentence of the module's docstring, as plain text."""
    doc = (importlib.import_module(module).__doc__ or "").strip().split("\n\n")[0]
    sentence = re.split(r"(?<=[.:;])\s", " ".join(doc.split()), maxsplit=1)[0]
    return re.sub(r"[`*|_]", "", sentence).rstrip(".:;")


def _foreign_members(module: str) -> list[str]:
    """Names of methods that another library writes into the module's classes (matplotlib gives each
    ``Artist`` subclass its own ``set``): their docstrings are that library's, in its markup, not the package's."""
    mod = importlib.import_module(module)
    names = set()
    for cls in vars(mod).values():
        if isinstance(cls, type) and cls.__module__ == module:
            names.update(name for name, member in vars(cls).items() if callable(member) and not name.startswith("_")
                         and not getattr(member, "__module__", PACKAGE).startswith(PACKAGE))
    return sorted(names)


def _automodule(module: str) -> str:
    """An ``automodule`` directive with the module's members, those of ``_foreign_members`` excluded."""
    foreign = _foreign_members(module)
    return (f"\n.. automodule:: {module}\n   :members:\n"
            + (f"   :exclude-members: {', '.join(foreign)}\n" if foreign else ""))


def _module_page(module: str) -> str:
    return _title(f"``{module}``") + _automodule(module)


def _subpackage_page(package: str) -> str:
    mod = importlib.import_module(package)
    text = _title(f"``{package}``")
    if hasattr(mod, "__all__"):
        # The package's docstring and the names it exports, documented where the package exports them.
        return text + f"\n.. automodule:: {package}\n   :members:\n"
    text += f"\n.. automodule:: {package}\n   :no-members:\n"
    for module in _modules(package):
        if module.count(".") != package.count(".") + 1 and hasattr(importlib.import_module(
                module.rsplit(".", 1)[0]), "__all__"):
            continue
        text += "\n" + f"``{module}``\n{'-' * (len(module) + 4)}\n" + _automodule(module)
    return text


def _write(path: pathlib.Path, text: str) -> None:
    """Write ``text`` only when it changed, so that an unchanged page is not rebuilt."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_api_pages(out: pathlib.Path) -> list[str]:
    """Write ``out/index.rst`` and one ``out/<module>.rst`` per page; return the pages' names."""
    out.mkdir(exist_ok=True)
    pkg = importlib.import_module(PACKAGE)
    top = sorted(info.name for info in pkgutil.iter_modules(pkg.__path__, prefix=PACKAGE + ".")
                 if not info.ispkg and not info.name.rsplit(".", 1)[1].startswith("_"))
    subpackages = sorted(info.name for info in pkgutil.iter_modules(pkg.__path__, prefix=PACKAGE + ".")
                         if info.ispkg and not info.name.rsplit(".", 1)[1].startswith("_"))
    paper = list(top)
    for sub in subpackages:
        if sub.rsplit(".", 1)[1] in PAPER_SUBPACKAGES:
            paper += [sub] + _modules(sub)
    others = [s for s in subpackages if s.rsplit(".", 1)[1] not in PAPER_SUBPACKAGES]
    pages = {}
    for module in paper:
        if module in subpackages:       # a paper-layer package: its docstring; its modules have their pages
            pages[module] = _title(f"``{module}``") + f"\n.. automodule:: {module}\n   :no-members:\n"
        else:
            pages[module] = _module_page(module)
    for sub in others:
        pages[sub] = _subpackage_page(sub)

    def table(names):
        return "\n".join(f"   {n}" for n in names)

    def rows(names):
        return "\n".join(f"- :doc:`{n}`: {_first_line(n)}" for n in names)

    index = (_title("API reference") +
             "\nGenerated from the docstrings of the installed package at every build: each array's shape and the"
             "\npaper section a function implements are as the docstrings give them.\n\n"
             "The paper layer\n---------------\n\nThe modules a student reads with the paper: one concept each.\n\n"
             f"{rows(paper)}\n\n.. toctree::\n   :hidden:\n\n{table(paper)}\n\n"
             "Subpackages\n-----------\n\nThe public functions and classes of each subpackage.\n\n"
             f"{rows(others)}\n\n.. toctree::\n   :hidden:\n\n{table(others)}\n")
    _write(out / "index.rst", index)
    for name, text in pages.items():
        _write(out / f"{name}.rst", text)
    for stale in out.glob("*.rst"):
        if stale.stem != "index" and stale.stem not in pages:
            stale.unlink()
    return ["index"] + list(pages)
