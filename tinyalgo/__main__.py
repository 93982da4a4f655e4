"""``python -m tinyalgo`` runs the command-line interface."""
from tinyalgo.cli import main

raise SystemExit(main())
