"""Every line of tests/torch_lines.py, run with `torch` bound to PyTorch and to lamina, on
the same inputs: values, dtypes, shapes and the gradients that reach the inputs agree."""

from __future__ import annotations

import numpy as np
import pytest
from torch_lines import entries

import lamina

torch = pytest.importorskip("torch")
# PyTorch warns once of its own: index_reduce is a beta API there
pytestmark = [pytest.mark.torch,
              pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")]

ENTRIES = entries()


def _inputs(dtype: np.dtype) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    f = {
        "x": rng.standard_normal((3, 4)), "y": rng.standard_normal((3, 4)),
        "z": rng.standard_normal((2, 3, 4)), "v": rng.standard_normal(4),
        "u": rng.standard_normal(3), "m": rng.standard_normal((4, 5)),
        "bm": rng.standard_normal((2, 4, 5)), "bn": rng.standard_normal((2, 5, 3)),
        "p": rng.uniform(0.5, 2.0, (3, 4)), "s": np.asarray(rng.standard_normal()),
        "sq": rng.standard_normal((3, 3)), "e": np.zeros((0, 4)),
    }
    arrays = {k: a.astype(dtype) for k, a in f.items()}
    arrays.update(
        i=rng.integers(0, 5, (3, 4)), j=rng.integers(1, 5, (3, 4)), idx=np.array([2, 0]),
        g=rng.integers(0, 4, (3, 2)), mask=rng.random((3, 4)) < 0.5, t=np.array([2, 0, 1]))
    return arrays


def _bind(lib, arrays: dict[str, np.ndarray]) -> dict[str, object]:
    env = {"torch": lib, "F": lib.nn.functional, "np": np}
    for k, a in arrays.items():
        env[k] = lib.tensor(a.copy(), requires_grad=a.dtype.kind == "f")
    return env


def _flat(out) -> list:
    if isinstance(out, (tuple, list)) and not hasattr(out, "numel"):
        return [o for item in out for o in _flat(item)]
    return [out]


def _dtype_name(d) -> str:
    return str(d).replace("torch.", "")


def _run(lib, line: str, arrays):
    env = _bind(lib, arrays)
    return eval(line, env), env  # noqa: S307 - the table's own lines


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("line, mode", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_line_matches_pytorch(line: str, mode: str, dtype) -> None:
    arrays = _inputs(np.dtype(dtype))
    previous = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float32)
        if mode.startswith("!"):
            with pytest.raises(Exception) as theirs:
                _run(torch, line, arrays)
            with pytest.raises(Exception) as ours:
                _run(lamina, line, arrays)
            base = next(c for c in type(theirs.value).__mro__ if c.__module__ == "builtins")
            assert isinstance(ours.value, base), (ours.value, theirs.value)
            assert base.__name__ == mode[1:], f"the table says {mode[1:]}, torch {base}"
            return
        want, tenv = _run(torch, line, arrays)
        got, lenv = _run(lamina, line, arrays)
    finally:
        torch.set_default_dtype(previous)
    _compare(want, got, mode, line)
    if mode == "":
        _compare_gradients(want, got, tenv, lenv, arrays)


def _compare(want, got, mode: str, line: str) -> None:
    want, got = _flat(want), _flat(got)
    assert len(want) == len(got), f"{line}: {len(want)} outputs in torch, {len(got)} in lamina"
    for w, g in zip(want, got):
        if isinstance(w, torch.Tensor):
            assert isinstance(g, lamina.Tensor), f"{line}: expected a Tensor, got {type(g)}"
            assert tuple(w.shape) == tuple(g.shape), line
            assert _dtype_name(w.dtype) == str(g.dtype), line
            if mode == "~":
                continue
            wa = w.detach().resolve_conj().numpy()
            tol = 1e-5 if w.dtype.is_floating_point or w.dtype.is_complex else 0
            tol = 1e-3 if w.dtype == torch.float16 else tol
            wide = np.complex128 if w.dtype.is_complex else np.float64
            np.testing.assert_allclose(g.array.astype(wide), wa.astype(wide),
                                       rtol=tol, atol=tol, err_msg=line)
        elif isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w, err_msg=line)
        elif isinstance(w, torch.dtype):
            assert _dtype_name(w) == str(np.dtype(g)), line
        elif isinstance(w, torch.device):
            assert str(w) == str(g), line
        else:
            assert w == g or (isinstance(w, float) and np.isclose(w, g, rtol=1e-5)), line


def _compare_gradients(want, got, tenv, lenv, arrays) -> None:
    pairs = [(w, g) for w, g in zip(_flat(want), _flat(got))
             if isinstance(w, torch.Tensor) and w.requires_grad
             and (w.dtype.is_floating_point or w.dtype.is_complex)]
    if not pairs:
        return
    rng = np.random.default_rng(3)
    weights = [rng.standard_normal(tuple(w.shape))
               + (1j * rng.standard_normal(tuple(w.shape)) if w.dtype.is_complex else 0)
               for w, _ in pairs]
    # A complex output's weights are complex, and the loss their product's real part.
    sum((w * torch.tensor(k, dtype=w.dtype)).real.sum() for (w, _), k in zip(pairs, weights)
        ).backward()
    sum((g * lamina.tensor(k, dtype=g.dtype)).real.sum() for (_, g), k in zip(pairs, weights)
        ).backward()
    for name, a in arrays.items():
        if a.dtype.kind != "f":
            continue
        tg, lg = tenv[name].grad, lenv[name].grad
        assert (tg is None) == (lg is None), f"gradient of {name}: torch {tg}, lamina {lg}"
        if tg is not None:
            np.testing.assert_allclose(lg.array, tg.numpy(), rtol=1e-5, atol=1e-5,
                                       err_msg=f"gradient of {name}")


def test_the_table_is_large() -> None:
    assert len(ENTRIES) >= 300


def test_every_listed_name_exists_and_has_a_line() -> None:
    from torch_lines import CREATION, LINES, NAMES

    text = "\n".join(LINES)
    for name in NAMES:
        assert hasattr(lamina.Tensor, name) or hasattr(lamina, name), name
        assert f".{name}" in text or f"torch.{name}(" in text, f"no line uses {name}"
    for name in CREATION:
        assert callable(getattr(lamina, name)), name
        assert f"torch.{name}(" in text or f".{name}(" in text or name == "tensor", name
