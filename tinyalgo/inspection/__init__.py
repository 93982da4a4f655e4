"""Looking inside a controller: text frames of a lane (``render``), traces of
an instance (``trace``) and their pictures (``trace_plots``), the state's
autocorrelation (``autocorrelation``, Table 2), and the matplotlib ``Figure``
every picture is drawn on (``figure``)."""
