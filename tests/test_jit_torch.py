"""`lamina.jit` and `set_default_tensor_type` against PyTorch's: scriptable model code runs
and computes what PyTorch's scripted or traced form computes; what needs TorchScript files
refuses with lamina's way."""
# ruff: noqa: UP006, UP045 - typing's generics, as TorchScript code writes them

import warnings
from typing import Dict, Final, List, Optional, Tuple  # noqa: UP035 - as TorchScript code

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
from lamina import jit

torch = pytest.importorskip("torch")


class _Block:
    """The same scriptable module in both libraries: jit.ignore, is_scripting, annotate,
    Final, as timm-style code writes them."""

    @staticmethod
    def build(lib):
        class Block(lib.nn.Module):
            scale: Final[float]

            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 2)
                self.scale = 0.5

            @lib.jit.ignore
            def describe(self):
                return "block"

            def forward(self, x):
                out = lib.jit.annotate(List[lib.Tensor], [])
                out.append(self.fc(x) * self.scale)
                if not lib.jit.is_scripting():  # eager code: both libraries run this
                    out[0] = out[0] + 0.0
                return out[0]

        return Block()


def test_scripting_and_tracing_compute_what_pytorchs_do():
    theirs, ours = _Block.build(torch).double(), _Block.build(lm).to("float64")
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        t_script, l_script = torch.jit.script(theirs), jit.script(ours)
        t_trace = torch.jit.trace(theirs, torch.tensor(x))
        l_trace = jit.trace(ours, lm.tensor(x))
    want = theirs(torch.tensor(x)).detach().numpy()
    for model in (l_script, l_trace):
        np.testing.assert_allclose(model(lm.tensor(x)).detach().numpy(), want, rtol=1e-12)
    for model in (t_script, t_trace):  # PyTorch's compiled forms agree with its eager one
        np.testing.assert_allclose(model(torch.tensor(x)).detach().numpy(), want, rtol=1e-12)
    assert l_script.describe() == "block"


def test_tracing_runs_the_model_once_as_pytorchs_does():
    """A batch-norm model traced in training mode updates its statistics in both."""
    x = np.random.default_rng(1).standard_normal((8, 3))
    t_bn, l_bn = torch.nn.BatchNorm1d(3).double(), nn.BatchNorm1d(3).to("float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(t_bn, torch.tensor(x), check_trace=False)
        jit.trace(l_bn, lm.tensor(x))
    np.testing.assert_allclose(l_bn.running_mean.numpy(), t_bn.running_mean.numpy(),
                               rtol=1e-12)
    assert int(l_bn.num_batches_tracked) == int(t_bn.num_batches_tracked) == 1


@pytest.mark.parametrize("name", ["script", "trace", "fork", "freeze"])
def test_the_deprecated_entry_points_warn_as_pytorchs_do(name):
    calls = {"script": lambda j, lib: j.script(lib.nn.Linear(2, 2)),
             "trace": lambda j, lib: j.trace(lib.nn.Linear(2, 2), lib.ones(1, 2)),
             "fork": lambda j, lib: j.wait(j.fork(lib.add, lib.ones(1), 1)),
             "freeze": lambda j, lib: j.freeze(j.script(lib.nn.Linear(2, 2).eval()))}
    for j, lib in ((torch.jit, torch), (jit, lm)):
        with pytest.warns(DeprecationWarning):
            calls[name](j, lib)


def test_small_helpers_answer_as_pytorchs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert float(jit.wait(jit.fork(lm.add, lm.ones(1), 2))) == float(
            torch.jit.wait(torch.jit.fork(torch.add, torch.ones(1), 2))) == 3.0
        with pytest.raises(RuntimeError, match="eval"):
            jit.freeze(nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="eval"):
            torch.jit.freeze(torch.jit.script(torch.nn.Linear(2, 2)))
    assert tuple(jit.Attribute(3, int)) == tuple(torch.jit.Attribute(3, int))
    assert jit.is_scripting() is torch.jit.is_scripting() is False
    assert jit.is_tracing() is torch.jit.is_tracing() is False
    cases = [([1, 2], List[int]), ([1, 2], List[str]), ({}, List[int]), ([1, "a"], List[int]),
             ({"a": 1}, Dict[str, int]), ({"a": 1}, Dict[str, str]), ((1, "a"), Tuple[int, str]),
             ((1, "a"), Tuple[int, int]), ((1,), Tuple[int, int]), (None, Optional[int]),
             (3, Optional[int]), ("a", Optional[int]), ([[1]], List[List[int]]), (3, int),
             (True, int), (3, str)]
    for obj, kind in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's warns on cases it checks fully too
            assert jit.isinstance(obj, kind) is torch.jit.isinstance(obj, kind), (obj, kind)
    for j in (jit, torch.jit):  # an empty container's items can't be checked
        with pytest.warns(UserWarning, match="inner type"):
            assert j.isinstance([], List[int])
    assert jit.isinstance([lm.ones(1)], List[lm.Tensor])
    assert jit.isinstance([1], list[int]) and jit.isinstance(None, int | None)
    assert not jit.isinstance("a", int | None)


def test_torchscript_files_are_refused_with_lamina_s_way(tmp_path):
    with pytest.raises(NotImplementedError, match=r"lamina.save\(model.state_dict"):
        jit.save(nn.Linear(2, 2), tmp_path / "m.pt")
    assert not (tmp_path / "m.pt").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), tmp_path / "t.pt")
    with pytest.raises(NotImplementedError, match="TorchScript.*load_state_dict"):
        jit.load(tmp_path / "t.pt")


def test_trace_needs_example_inputs():
    with pytest.raises(RuntimeError, match="example_inputs"), pytest.warns(DeprecationWarning):
        jit.trace(nn.Linear(2, 2))


@pytest.mark.parametrize("given", ["DoubleTensor", "torch.DoubleTensor", "FloatTensor"])
def test_set_default_tensor_type_sets_pytorchs_default_dtype(given):
    try:
        for lib in (torch, lm):  # PyTorch warns once a process, lamina each call
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                lib.set_default_tensor_type(getattr(lib, given) if "." not in given
                                            else given)
            assert lib is torch or any("deprecated" in str(w.message) for w in seen)
        assert str(lm.tensor([1.0]).dtype) == str(torch.tensor([1.0]).dtype).split(".")[1]
        assert str(lm.get_default_dtype()) == str(torch.get_default_dtype()).split(".")[1]
    finally:
        torch.set_default_dtype(torch.float32)
        lm.set_default_dtype(lm.float32)


@pytest.mark.parametrize("given", ["LongTensor", "torch.cuda.FloatTensor", "float64"])
def test_set_default_tensor_type_refuses_what_pytorch_refuses(given):
    def arg(lib):
        return getattr(lib, given) if hasattr(lib, given) and "." not in given else given

    for lib in (torch, lm):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError):
                lib.set_default_tensor_type(arg(lib))
    assert lm.get_default_dtype() == lm.float32
