"""What the process gets from its host, below everything else: the memory it
can still allocate (``memory``), one BLAS thread set where a process starts
(``threads``), glibc's allocator kept from returning a rollout's freed
memory between rollouts (``allocator``, optional, speed only), and the
batched environment's speed devices (``speed``: packed lanes, the random
table's index carried by the head, range checks on unsigned views)."""
