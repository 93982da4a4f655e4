"""The point of comparison: a PyTorch eager GRUCell of the same size (tinyalgo never imports PyTorch).

    python benchmarks/bench_torch_gru.py [--threads 2] [--smoke] [--cpu-time]   # needs PyTorch

Microseconds per time step (all B = 20 lanes) for forward plus backward over
T = 50 steps, float32, one thread (or ``--threads N``): the GRUCell alone (200 inputs, 200 units),
and the whole controller of ``bench_bptt.py`` built from PyTorch modules (the
one-hot embedding, the GRUCell, the extra layer with tanh, the Q and symbol
heads with log-softmax).  Median of repeats.  ``--smoke``: 8 units, T = 3, one repeat.
"""
import sys

from timing import CPU_TIME, median_seconds, smoke_or

try:
    import torch
except ImportError:
    sys.exit("bench_torch_gru.py compares with PyTorch, which is not installed"
             " (its CPU build: pip install torch==2.13.0)")

SIZES, ACTIONS, SYMBOLS, B = (17, 17, 2, 5, 3), 8, 17, 20
H, T = smoke_or(200, 8), smoke_or(50, 3)


def main():
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    cell = torch.nn.GRUCell(H, H)
    embed = torch.nn.Linear(sum(SIZES), H)
    extra, q_head, sym_head = torch.nn.Linear(H, H), torch.nn.Linear(H, ACTIONS), torch.nn.Linear(H, SYMBOLS)
    xs = torch.randn(T, B, H)
    onehots = torch.zeros(T, B, sum(SIZES))
    offset = 0
    for size in SIZES:
        onehots.scatter_(2, offset + torch.randint(0, size, (T, B, 1)), 1.0)
        offset += size
    dq, dlogp = torch.randn(T, B, ACTIONS), torch.randn(T, B, SYMBOLS)

    def cell_only():
        h, loss = torch.zeros(B, H), 0.0
        for t in range(T):
            h = cell(xs[t], h)
            loss = loss + (h * xs[t]).sum()
        loss.backward()

    def controller():
        h, loss = torch.zeros(B, H), 0.0
        for t in range(T):
            h = cell(embed(onehots[t]), h)
            top = torch.tanh(extra(h))
            loss = loss + (q_head(top) * dq[t]).sum() + (torch.log_softmax(sym_head(top), 1) * dlogp[t]).sum()
        loss.backward()

    print(f"PyTorch {torch.__version__}, {threads} thread(s), float32, B = {B}, T = {T}, {H} units, per step"
          f"{' (CPU time)' if CPU_TIME else ''}:")
    for name, fn in (("GRUCell alone", cell_only), ("controller (embedding, GRUCell, extra, heads)", controller)):
        fn()                                                   # warm up
        print(f"  {name:48s} forward + backward {median_seconds(fn) / T * 1e6:7.1f} us")


if __name__ == "__main__":
    main()
