"""`compile(model)` laid out as PyTorch's compiled module: its class name, the model as
`_orig_mod`, state-dict keys under `_orig_mod.` (a checkpoint PyTorch saved from a
compiled model loads into lamina's), the model's attributes reachable through it, and
keyword arguments passed on."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")


class Scaled:
    """The same module class for both libraries."""

    @staticmethod
    def make(t):
        class Model(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = t.nn.Linear(3, 2)

            def forward(self, x, scale=1.0):
                return self.fc(x) * scale

        return Model()


def _torch_compiled():
    with warnings.catch_warnings():  # torch.compile's imports warn of torch.jit's names
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.compile(Scaled.make(torch))


def test_compiled_module_is_laid_out_as_pytorch_s():
    theirs = _torch_compiled()
    ours = lm.compile(Scaled.make(lm))
    assert type(ours).__name__ == type(theirs).__name__ == "OptimizedModule"
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)
    assert type(ours._orig_mod).__name__ == "Model" and ours.fc is ours._orig_mod.fc


def test_a_checkpoint_of_pytorch_s_compiled_model_loads_and_runs_the_same():
    theirs = _torch_compiled()
    ours = lm.compile(Scaled.make(lm))
    result = ours.load_state_dict({k: v.detach().numpy() for k, v in
                                   theirs.state_dict().items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    with torch.no_grad():
        want = theirs._orig_mod(torch.tensor(x), scale=2.0).numpy()
    with lm.no_grad():
        got = ours(lm.tensor(x), scale=2.0)  # keywords pass on to the model
        planned = ours(lm.tensor(x)) * 2.0
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(planned.numpy(), want, rtol=1e-6, atol=1e-6)
    assert ours._plan is not None


def test_an_attribute_neither_has_is_an_error():
    with pytest.raises(AttributeError):
        lm.compile(Scaled.make(lm)).missing_attribute  # noqa: B018
