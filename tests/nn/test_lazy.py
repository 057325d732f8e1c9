"""Lazy modules: the optimizer made before the first call trains the parameters it
sized, a state dict sizes them, and configs describe the lazy layer, then the layer it
became."""

from __future__ import annotations

import numpy as np

import lamina as lm
import lamina.nn as nn


def test_an_optimizer_made_before_the_first_call_trains_the_sized_parameters():
    lm.manual_seed(0)
    model = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
    opt = lm.optim.SGD(model.parameters(), lr=0.1)
    x, y = lm.randn(8, 3), lm.randn(8, 1)
    before = None
    for _ in range(3):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        before = before if before is not None else loss.item()
    assert [tuple(p.shape) for p in opt.param_groups[0]["params"]] == [(4, 3), (4,), (1, 4),
                                                                        (1,)]
    assert ((model(x) - y) ** 2).mean().item() < before


def test_configs_describe_the_lazy_layer_then_the_layer_it_became():
    layer = nn.LazyConv2d(4, 3, padding=1)
    assert layer.to_config() == {"type": "LazyConv2d", "out_channels": 4, "kernel_size": 3,
                                 "stride": 1, "padding": 1, "dilation": 1, "groups": 1,
                                 "bias": True, "padding_mode": "zeros"}
    again = nn.from_config(layer.to_config())
    layer(lm.ones(1, 2, 5, 5))
    assert layer.to_config()["type"] == "Conv2d" and layer.to_config()["in_channels"] == 2
    again.load_state_dict(layer.state_dict())  # sized by the state dict
    np.testing.assert_array_equal(again(lm.ones(1, 2, 5, 5)).detach().numpy(),
                                  layer(lm.ones(1, 2, 5, 5)).detach().numpy())


def test_a_plan_compiled_before_any_call_sizes_the_layers_without_moving_statistics():
    model = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d())
    step = lm.plan.compile(model, lambda out, y: ((out - y) ** 2).mean(),
                           (lm.randn(6, 2), lm.zeros(6, 3)))
    assert type(model[1]).__name__ == "BatchNorm1d"
    assert model[1].num_batches_tracked.item() == 0
    step(lm.randn(6, 2), lm.zeros(6, 3))
    assert model[1].num_batches_tracked.item() == 1
