"""Experiments that reproduce the paper's tables and figures, each one
``tinyalgo experiment`` command (``tinyalgo.cli.experiment``).

* the sweeps of runs: ``table1`` (with ``table1_report``: the paper's Table 1
  and a sweep's rows), ``figure5``, ``appendix`` (Appendices B and C), and
  ``figure3`` (the supervised setting); ``runlogs``: a sweep's finished runs,
  loose or packed into one file, from which the tables are rebuilt;
* ``table2`` (the controller's state, Table 2) and ``figure4b`` (an LSTM that
  overfits the lengths, and its machine: Figure 4b);
* the analyses of a sweep's final models or table: ``departures`` and
  ``q_margins`` (which decisions fail at long lengths), ``hazard`` (the
  error rate per step), ``reverse_first_step`` (Appendix B's reverse trap);
* ``automata``: machines extracted from trained models, tested against the
  networks (Figure 4, section 6.4).
"""
