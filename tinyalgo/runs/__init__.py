"""A run's machinery: every training option declared once (``options``), a run's
configuration and where it stands (``config``), files written atomically
(``fileio``), checkpoints (``checkpoint``) and run directories that resume
(``rundir``)."""
