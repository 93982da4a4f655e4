"""Experiments that reproduce the paper's tables and figures: sweeps of runs
(``table1``) and the supervised accuracy curves (``figure3``)."""
