"""What the process gets from its host, below everything else: the memory it
can still allocate (``memory``)."""
