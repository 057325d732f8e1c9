"""Forward hooks against PyTorch's: keyword arguments passed to and replaced by hooks
(`with_kwargs`), `prepend`, `always_call` when forward raises (a hook's own error only
warned of), a handle as a context manager, a pre-hook's bad return; and
`nn.attention.sdpa_kernel` around attention."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _scenario(fw: str) -> list:
    t, nn = importlib.import_module(fw), importlib.import_module(f"{fw}.nn")

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x, scale=1.0):
            if scale < 0:
                raise ValueError("negative scale")
            return self.lin(x) * scale

    m = Scaled()
    with t.no_grad():
        m.lin.weight.copy_(t.tensor([[1.0, 2.0], [3.0, 4.0]]))
        m.lin.bias.zero_()
    seen, x = [], t.ones(1, 2)
    kw = m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {**kwargs, "scale": 2.0}),
                                     with_kwargs=True)
    m.register_forward_pre_hook(lambda mod, args: seen.append(("pre", len(args))), prepend=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["scale"],
                            with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: seen.append(("always", out is None)),
                            always_call=True)
    seen.append(m(x).tolist())
    seen.append(m(x, scale=-1.0).tolist())  # the pre-hook overrides the scale
    kw.remove()
    with pytest.raises(ValueError, match="negative scale"):
        m(x, scale=-1.0)

    def broken(mod, args, out):
        raise KeyError("hook")

    m.register_forward_hook(broken, always_call=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="negative scale"):
            m(x, scale=-1.0)
    seen.append([str(w.message) for w in caught])
    with m.register_forward_hook(lambda mod, args, out: out * 0):
        seen.append(len(m._forward_hooks))
    seen.append(len(m._forward_hooks))
    m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with warnings.catch_warnings(record=True) as caught:  # the always_call hooks run too
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError) as e:
            m(x)
    seen.append(str(e.value))
    seen.append([str(w.message) for w in caught])
    return seen


def test_forward_hooks_behave_as_pytorch_s():
    assert _scenario("lamina") == _scenario("torch")


def test_sdpa_kernel_runs_attention_as_pytorch_s():
    from torch.nn.attention import SDPBackend as TorchBackend

    import lamina as lm
    from lamina.nn.attention import SDPBackend, sdpa_kernel

    assert {k: int(v) for k, v in SDPBackend.__members__.items()} == \
        {k: int(v) for k, v in TorchBackend.__members__.items()}
    q = np.random.default_rng(0).standard_normal((1, 2, 5, 4))
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
        ours = lm.nn.functional.scaled_dot_product_attention(*[lm.tensor(q)] * 3, is_causal=True)
    want = torch.nn.functional.scaled_dot_product_attention(*[torch.tensor(q)] * 3,
                                                            is_causal=True)
    np.testing.assert_allclose(ours.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="expected an SDPBackend"), sdpa_kernel("math"):
        pass
