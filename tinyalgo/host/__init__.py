"""What the process gets from its host, below everything else: the memory it
can still allocate (``memory``), one BLAS thread set where a process starts
(``threads``), and glibc's allocator kept from returning a rollout's freed
memory between rollouts (``allocator``, optional, speed only)."""
