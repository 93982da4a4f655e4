"""The controller's configuration and its parameters (paper section 2;
docs/original-release.md#controller): ``ControllerConfig`` (observation fields, actions,
vocabulary, core, units, layers, initialisation, dtype), the named parameter
shapes it implies, ``init_params``, ``check_params``, whether a configuration
fits an environment (``layout_mismatch``) and how much memory a controller
needs (``memory_bytes``).  The network itself is ``tinyalgo.controller``."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tinyalgo import cores
from tinyalgo.layers import field_offsets

CACHE_ARRAYS = {"ff": 0, "gru": 12, "lstm": 16}   # arrays of ``units`` numbers a step caches per core layer
PARAM_COPIES = 4                  # parameters, gradients, a boundary copy and the best model's


@dataclass
class ControllerConfig:
    """obs_sizes: values of each observation field; n_actions: joint actions;
    n_symbols: vocabulary size; core: ff, gru or lstm; units (paper: 200);
    layers; init: "torch" (the release: U(+-1/sqrt(fan_in)) x 2 on weights and
    biases) or "glorot" (the paper's words: Glorot-uniform x 2, zero biases);
    dtype: float64 (gradient checks) or float32 (speed)."""

    obs_sizes: tuple
    n_actions: int
    n_symbols: int
    core: str = "gru"
    units: int = 200
    layers: int = 1
    init: str = "torch"
    dtype: str = "float64"
    _offsets: np.ndarray = field(default=None, repr=False, compare=False)
    _sizes: np.ndarray = field(default=None, repr=False, compare=False)

    @classmethod
    def for_environment(cls, env, core: str = "gru", units: int = 200, layers: int = 1, dtype: str = "float64"):
        """The configuration of a controller sized for ``env``'s observations,
        actions and vocabulary."""
        return cls(obs_sizes=env.obs_sizes, n_actions=env.n_actions, n_symbols=env.vocab.size, core=core,
                   units=units, layers=layers, dtype=dtype)

    def __post_init__(self):
        self.obs_sizes = tuple(int(s) for s in self.obs_sizes)
        if not self.obs_sizes or min(self.obs_sizes) < 1:
            raise ValueError(f"obs_sizes must be positive field sizes; got {self.obs_sizes}")
        if self.core not in cores.CORES:
            raise ValueError(f"unknown core {self.core!r}; allowed: {', '.join(cores.CORES)}")
        for name in ("n_actions", "n_symbols", "units", "layers"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        if self.init not in ("torch", "glorot"):
            raise ValueError(f"init must be 'torch' or 'glorot'; got {self.init!r}")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64'; got {self.dtype!r}")
        self._offsets = field_offsets(self.obs_sizes)
        self._sizes = np.array(self.obs_sizes, dtype=np.uint64)

    def to_dict(self) -> dict:
        return dict(obs_sizes=list(self.obs_sizes), n_actions=self.n_actions, n_symbols=self.n_symbols,
                    core=self.core, units=self.units, layers=self.layers, init=self.init, dtype=self.dtype)

    def param_shapes(self) -> dict:
        """Name -> (shape, fan_in, fan_out) of every parameter."""
        H, n_in = self.units, int(sum(self.obs_sizes))
        shapes = {"embed.w": ((n_in, H), n_in, H), "embed.b": ((H,), n_in, H)}   # Linear(one-hots -> units)
        for layer in range(self.layers if self.core != "ff" else 0):
            for name, shape in cores.core_param_shapes(self.core, H, H).items():
                shapes[f"core{layer}.{name}"] = (shape, cores.core_fan_in(name, H, H), H)
        shapes.update({"extra.w": ((H, H), H, H), "extra.b": ((H,), H, H),
                       "q.w": ((H, self.n_actions), H, self.n_actions), "q.b": ((self.n_actions,), H, self.n_actions),
                       "sym.w": ((H, self.n_symbols), H, self.n_symbols),
                       "sym.b": ((self.n_symbols,), H, self.n_symbols)})
        return shapes


def init_params(config: ControllerConfig, rng: np.random.Generator) -> dict:
    """Initial parameters (docs/original-release.md#initialisation): "torch" draws every weight and bias
    from U(+-2/sqrt(fan_in)) (Torch's Linear default, then x 2 as in the
    release); "glorot" draws weights from Glorot-uniform x 2 (per fused block)
    with zero biases.  The initial recurrent state is zero."""
    params = {}
    for name, (shape, fan_in, fan_out) in config.param_shapes().items():
        if config.init == "torch":
            bound = 2.0 / np.sqrt(fan_in)
            value = rng.uniform(-bound, bound, size=shape)
        elif name.endswith(".w") or name.split(".")[-1].startswith("w"):
            bound = 2.0 * np.sqrt(6.0 / (fan_in + fan_out))
            value = rng.uniform(-bound, bound, size=shape)
        else:
            value = np.zeros(shape)
        params[name] = value.astype(config.dtype)
    return params


def check_params(config: ControllerConfig, params) -> None:
    """A ValueError unless ``params`` holds exactly the parameters of ``config``, of their shapes."""
    if not isinstance(params, dict):
        raise ValueError(f"params must be a dict of named arrays; got {type(params).__name__}")
    expected = config.param_shapes()
    missing, extra = sorted(set(expected) - set(params)), sorted(set(params) - set(expected))
    if missing or extra:
        raise ValueError(f"params do not match the configuration ({config.core.upper()}-{config.units},"
                         f" {config.layers} layer(s)): missing {missing}, unexpected {extra}")
    for name, (shape, _, _) in expected.items():
        if np.shape(params[name]) != tuple(shape):
            raise ValueError(f"parameter {name} must have shape {tuple(shape)}; got {np.shape(params[name])}")


def layout_mismatch(config: ControllerConfig, env):
    """The first of (observation fields, actions, symbols) where a controller
    of ``config`` does not fit ``env``, as (name, config's, env's); None if it fits."""
    need = dict(obs_sizes=tuple(env.obs_sizes), n_actions=env.n_actions, n_symbols=env.vocab.size)
    for name, value in need.items():
        if tuple(np.atleast_1d(getattr(config, name))) != tuple(np.atleast_1d(value)):
            return name, getattr(config, name), value
    return None


def memory_bytes(units: int, layers: int, core: str, batch: int = 0, steps: int = 0, itemsize: int = 8) -> int:
    """An upper bound of a controller's memory: its parameters (x
    ``PARAM_COPIES``) and a rollout's caches of ``batch`` lanes x ``steps``."""
    per_layer = {"ff": 0, "gru": 3, "lstm": 4}[core] * 2 * units * units
    params = (per_layer * layers + units * units + 64 * units) * itemsize
    caches = batch * steps * units * (CACHE_ARRAYS[core] * max(layers, 1) + 6) * itemsize
    return PARAM_COPIES * params + caches
