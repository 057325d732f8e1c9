"""nn.utils's batch-norm fusion against PyTorch's: the fused layer's weights equal
PyTorch's fused ones and compute what conv (or linear) then batch norm computed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn

torch = pytest.importorskip("torch")

PAIRS = [("Conv2d(3, 4, 3)", "BatchNorm2d(4)", (2, 3, 5, 5), False),
         ("Conv2d(3, 4, 3, bias=False)", "BatchNorm2d(4)", (2, 3, 5, 5), False),
         ("Conv1d(2, 3, 2)", "BatchNorm1d(3, affine=False)", (2, 2, 6), False),
         ("ConvTranspose2d(3, 4, 2, stride=2)", "BatchNorm2d(4)", (1, 3, 3, 3), True),
         ("Linear(5, 3)", "BatchNorm1d(3)", (4, 5), None)]


@pytest.mark.parametrize("layer, norm, shape, transpose", PAIRS, ids=[p[0] for p in PAIRS])
def test_the_fused_layer_is_pytorchs(layer, norm, shape, transpose):
    rng = np.random.default_rng(0)
    built = []
    for lib in (torch, lm):
        a = eval(layer, {"__builtins__": {}}, vars(lib.nn))  # noqa: S307
        b = eval(norm, {"__builtins__": {}}, vars(lib.nn))  # noqa: S307
        built.append((a.double() if lib is torch else a.to("float64"),
                      b.double() if lib is torch else b.to("float64")))
    (ta, tb), (la, lb) = built
    with torch.no_grad():  # statistics and affine values away from their defaults
        tb.running_mean.copy_(torch.tensor(rng.standard_normal(tb.running_mean.shape)))
        tb.running_var.copy_(torch.tensor(rng.uniform(0.5, 2, tb.running_var.shape)))
        if tb.weight is not None:
            tb.weight.copy_(torch.tensor(rng.uniform(0.5, 2, tb.weight.shape)))
    for t, m in ((ta, la), (tb, lb)):
        m.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
        t.eval()
        m.eval()
    if transpose is None:
        fused_t, fused_l = (torch.nn.utils.fuse_linear_bn_eval(ta, tb),
                            nn.utils.fuse_linear_bn_eval(la, lb))
    else:
        fused_t = torch.nn.utils.fuse_conv_bn_eval(ta, tb, transpose)
        fused_l = nn.utils.fuse_conv_bn_eval(la, lb, transpose)
    for k, v in fused_t.state_dict().items():
        np.testing.assert_allclose(fused_l.state_dict()[k].numpy(), v.numpy(), rtol=1e-12)
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(fused_l(lm.tensor(x)).detach().numpy(),
                               lb(la(lm.tensor(x))).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_fusion_refuses_training_mode_and_the_old_init_names_warn():
    with pytest.raises(AssertionError, match="only for eval"):
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1))
    for lib in (torch, lm):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.init.normal(lib.empty(2, 2))
        assert [type(w.message) for w in caught] == [FutureWarning]

