"""Grading tests of a tinyalgo assignment: each test's points are in points.json;
``tinyalgo assignment grade DIR`` runs them and adds them up."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))      # grading.py, the shared checks
