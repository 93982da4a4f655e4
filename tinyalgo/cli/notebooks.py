"""The ``notebooks`` command: each tutorial script's Jupyter notebook, made
from the script (``tinyalgo.assignments.notebook``).

    tinyalgo notebooks                     # write tutorials/*.ipynb, each from its NN_*.py
    tinyalgo notebooks --check tutorials   # exit status 1 if a notebook is missing or differs from its script

A folder without tutorial scripts, a script with a bad cell marker and a
folder that cannot be written are refused before anything is written.
"""
from __future__ import annotations

import os

from tinyalgo.assignments.notebook import scripts, stale, write_notebooks
from tinyalgo.cli.args import UsageError, check_writable_folder

DEFAULT_FOLDER = "tutorials"


def cmd_notebooks(args) -> int:
    if not os.path.isdir(args.folder):
        raise UsageError(f"{args.folder}: {'is a file' if os.path.exists(args.folder) else 'no such folder'};"
                         " give the folder of the tutorial scripts")
    if not scripts(args.folder):
        raise UsageError(f"{args.folder}: no tutorial scripts (NN_*.py) there")
    if not args.check:
        check_writable_folder(args.folder, "FOLDER")
    paths = stale(args.folder) if args.check else write_notebooks(args.folder)    # every script read first
    for path in paths:
        print(f"{path}: {'differs from its script' if args.check else 'written'}")
    return 1 if args.check and paths else 0


def register(sub) -> None:
    p = sub.add_parser("notebooks", help="make each tutorial's notebook from its script (or --check them)",
                       description="Write each NN_*.py tutorial script of FOLDER as NN_*.ipynb (nbformat 4.5,"
                                   " without outputs: the same bytes for the same script).")
    p.add_argument("folder", nargs="?", default=DEFAULT_FOLDER, metavar="FOLDER",
                   help=f"the folder of the tutorial scripts (default {DEFAULT_FOLDER})")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit status 1 if a notebook is missing or differs from its script"
                        " (default off)")
    p.set_defaults(func=cmd_notebooks)
