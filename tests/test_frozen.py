"""The folded embedding of FrozenController: grouped fields, their tables of
row sums, and the first pre-activation they give, against the one-hot
product it replaces."""
import numpy as np
import pytest

from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.fast.frozen import MAX_GROUP_ROWS, field_groups, group_strides, group_tables
from tinyalgo.layers import field_offsets, onehot


def test_field_groups():
    assert field_groups((17, 17, 2, 5, 3)) == [[0, 1], [2, 3, 4]]          # 289 and 30 joint values
    assert field_groups((5, 5, 2, 5, 3)) == [[0, 1, 2, 3], [4]]            # 250 and 3
    assert field_groups((7,)) == [[0]]
    assert field_groups((600, 2, 3)) == [[0], [1, 2]]                      # a field past the limit stands alone
    assert field_groups((2, 600, 2)) == [[0], [1], [2]]
    for sizes in [(17, 17, 2, 5, 3), (3, 4, 5, 6, 7, 8), (2,) * 12]:
        for fields in field_groups(sizes):
            assert np.prod([sizes[f] for f in fields]) <= MAX_GROUP_ROWS
        assert sum(field_groups(sizes), []) == list(range(len(sizes)))


@pytest.mark.parametrize("sizes", [(5, 5, 2, 5, 3), (17, 17, 2, 5, 3), (600, 2, 3), (9,), (2,) * 11])
def test_tables_give_the_onehot_product(sizes):
    rng = np.random.default_rng(0)
    M, const = rng.normal(size=(sum(sizes), 6)), rng.normal(size=6)
    groups = field_groups(sizes)
    tables = group_tables(M, field_offsets(sizes), sizes, groups, const)
    assert [len(t) for t in tables] == [int(np.prod([sizes[f] for f in fields])) for fields in groups]
    obs = np.stack([rng.integers(0, s, size=50) for s in sizes], axis=1)
    rows = obs @ group_strides(sizes, groups)
    got = sum(table[rows[:, g]] for g, table in enumerate(tables))
    np.testing.assert_allclose(got, onehot(obs, sizes) @ M + const, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("core", ["ff", "gru", "lstm"])
def test_first_preactivation_is_the_embedding_through_the_first_matrix(core):
    sizes = (17, 17, 2, 5, 3)
    ctrl = Controller(ControllerConfig(sizes, 8, 6, core=core, units=7), rng=np.random.default_rng(1))
    P, rng = ctrl.params, np.random.default_rng(2)
    obs = np.stack([rng.integers(0, s, size=20) for s in sizes], axis=1)
    x = onehot(obs, sizes) @ P["embed.w"] + P["embed.b"]
    if core == "ff":
        want = x @ P["extra.w"] + P["extra.b"]
    else:
        recurrent_biases = np.concatenate([P["core0.bh"], P["core0.bhh"]]) if core == "gru" else P["core0.bh"]
        want = x @ P["core0.wx"] + P["core0.bx"] + recurrent_biases
    np.testing.assert_allclose(ctrl.frozen().first_preactivation(obs), want, rtol=1e-12, atol=1e-12)
