"""The grading tests: run in the grader's process, never in the worker (``checks.py``)."""
