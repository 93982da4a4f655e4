"""tinyalgo's Gymnasium environments against CartPole-v1, measured in one run.

    python benchmarks/bench_gym.py                   # tinyalgo/Copy-v0, 7 rounds
    python benchmarks/bench_gym.py --tasks all       # the six tasks and gym's classic six
    python benchmarks/bench_gym.py --rounds 9 --steps 20000 --vector-steps 10000

Single environment: ``gym.make(id)`` (with the wrappers gym.make adds) steps
with uniformly random actions and is reset when an episode ends, as an RL
loop does; steps per second.  Vector environment: ``gym.make_vec(id,
num_envs=64, vectorization_mode="vector_entry_point")`` (each library's native
vector environment, with its own autoreset) steps with random actions;
lane-steps per second (64 per step).  The actions are drawn before the clock
starts, from the environment's own action space, so the spaces' sampling is
not timed.  Random actions are the worst case for tinyalgo: nearly every
write is wrong, so an episode lasts about two steps and resets dominate.

Each round times CartPole and every tinyalgo id back to back; the ratio is
taken within a round, and the script prints the medians over rounds of the
rates and of the ratios (this machine's speed drifts, so only figures of one
run are compared).
"""
import argparse
import statistics
import time

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")    # as tinyalgo.host.threads does, before NumPy loads
import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import tinyalgo.gym as tg  # noqa: E402

CARTPOLE = "CartPole-v1"


def single_rate(env_id: str, steps: int, seed: int = 0) -> float:
    """Steps per second of ``gym.make(env_id)`` with random actions, resets included."""
    env = gym.make(env_id)
    env.action_space.seed(seed)
    actions = [env.action_space.sample() for _ in range(steps)]
    env.reset(seed=seed)
    step, reset = env.step, env.reset
    t0 = time.perf_counter()
    for a in actions:
        _, _, terminated, truncated, _ = step(a)
        if terminated or truncated:
            reset()
    seconds = time.perf_counter() - t0
    env.close()
    return steps / seconds


def vector_rate(env_id: str, num_envs: int, steps: int, seed: int = 0) -> float:
    """Lane-steps per second of the native vector environment with random actions."""
    envs = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point")
    envs.action_space.seed(seed)
    actions = [envs.action_space.sample() for _ in range(steps)]
    envs.reset(seed=seed)
    step = envs.step
    t0 = time.perf_counter()
    for a in actions:
        step(a)
    seconds = time.perf_counter() - t0
    envs.close()
    return num_envs * steps / seconds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="copy",
                        help="comma-separated tinyalgo task names or gym ids, or 'all' (default copy)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20000, help="single-environment steps per measurement")
    parser.add_argument("--vector-steps", type=int, default=10000,
                        help="vector steps per measurement (enough for each lane to draw several chunks)")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--smoke", action="store_true", help="one round of 100 steps (vector: 8 copies x 20 steps)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rounds, args.steps, args.vector_steps, args.num_envs = 1, 100, 20, 8
    classic = getattr(tg, "CLASSIC_IDS", {})
    if args.tasks == "all":
        ids = list(tg.ENV_IDS.values()) + list(classic.values())
    else:
        ids = [tg.ENV_IDS.get(t, classic.get(t, t)) for t in args.tasks.split(",")]
    single = {i: [] for i in [CARTPOLE] + ids}
    vector = {i: [] for i in [CARTPOLE] + ids}
    for r in range(args.rounds):
        for i in [CARTPOLE] + ids:
            single[i].append(single_rate(i, args.steps, seed=r))
            vector[i].append(vector_rate(i, args.num_envs, args.vector_steps, seed=r))
    med = statistics.median
    print(f"{args.rounds} rounds; single: {args.steps} steps, vector: {args.num_envs} copies x"
          f" {args.vector_steps} steps; random actions, resets included; medians")
    print(f"{'id':34s} {'single steps/s':>15s} {'ratio':>7s} {'vector lane-steps/s':>20s} {'ratio':>7s}")
    for i in [CARTPOLE] + ids:
        rs = med(np.array(single[i]) / np.array(single[CARTPOLE]))
        rv = med(np.array(vector[i]) / np.array(vector[CARTPOLE]))
        print(f"{i:34s} {med(single[i]):15,.0f} {rs:7.1%} {med(vector[i]):20,.0f} {rv:7.1%}")


if __name__ == "__main__":
    main()
