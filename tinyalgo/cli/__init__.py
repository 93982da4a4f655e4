"""The ``tinyalgo`` command line: ``main`` parses and dispatches; each
subcommand lives next to its options."""
from tinyalgo.cli.main import main

__all__ = ["main"]
