"""`lamina.func`, PyTorch's `torch.func`: function transforms of first order. grad,
grad_and_value, vjp, jvp, jacrev and jacfwd run on lamina's reverse mode; vmap maps a
function over a dim by a Python loop (each slice its own call: the values PyTorch's
vmap gives, at a loop's speed); functional_call swaps a module's parameters for given
tensors. Transforms compose with each other and with autograd: an argument that
requires grad (from an outer transform or the user's own graph) stays in its graph, its
gradient taken with create_graph=True, so grad of grad and hessian work.

    >>> from lamina import func
    >>> func.grad(lambda x: (x ** 2).sum())(lm.tensor([1.0, 2.0]))
    tensor([2., 4.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lamina.autograd import functional as _functional
from lamina.autograd.engine import grad as _grad
from lamina.autograd.tensor import Tensor
from lamina.nn.utils.stateless import functional_call


def _argnums(argnums: Any, n: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    return tuple(a % n for a in nums)


def grad_and_value(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False
                   ) -> Callable[..., Any]:
    """A function returning (the gradient of func's one-element output with respect to
    the arguments `argnums`, that output); with has_aux, func returns (output, aux) and
    the value is that pair.

    Examples:
        >>> g, v = lm.func.grad_and_value(lambda x: (x * x).sum())(lm.tensor([3.0]))
        >>> g, v
        (tensor([6.]), tensor(9.))
    """
    def transformed(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args))
        full, prepared, rebuilders = list(args), {}, {}
        # An argument in a graph already (an outer transform's, a MAML step's) is viewed,
        # not cut: its gradient is recorded and differentiable in that graph.
        outer = False
        for i in nums:
            tensors, rebuilders[i] = _flatten(args[i])
            for t in tensors:
                if not isinstance(t, Tensor):
                    raise TypeError(f"func.grad: argument {i} holds a {type(t).__name__}; "
                                    f"the differentiated arguments are tensors, or dicts, "
                                    f"lists and tuples of them")
            outer = outer or any(t.requires_grad for t in tensors)
            prepared[i] = [t.view_as(t) if t.requires_grad else t.detach().requires_grad_(True)
                           for t in tensors]
            full[i] = rebuilders[i](prepared[i])
        out = func(*full, **kwargs)
        value, aux = out if has_aux else (out, None)
        if not isinstance(value, Tensor) or value.numel() != 1:
            raise RuntimeError("func.grad: the function must return a one-element tensor "
                               f"(got {getattr(value, 'shape', type(value).__name__)})")
        grads = iter(_grad(value, [t for i in nums for t in prepared[i]], allow_unused=True,
                           materialize_grads=True, create_graph=outer))
        # each argument's gradients in its own structure (a dict of parameters: a dict)
        per = [rebuilders[i]([next(grads) for _ in prepared[i]]) for i in nums]
        g = per[0] if isinstance(argnums, int) else tuple(per)
        return g, ((value.detach(), aux) if has_aux else value.detach())
    return transformed


def grad(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False
         ) -> Callable[..., Any]:
    """A function returning the gradient of func's one-element output with respect to
    the arguments `argnums` (and func's aux with has_aux).

    Examples:
        >>> lm.func.grad(lambda x, y: (x * y).sum(), argnums=1)(lm.ones(2), lm.ones(2))
        tensor([1., 1.])
    """
    both = grad_and_value(func, argnums, has_aux)

    def transformed(*args: Any, **kwargs: Any) -> Any:
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return transformed


def jacrev(func: Callable[..., Any], argnums: Any = 0, *, has_aux: bool = False,
           chunk_size: Any = None) -> Callable[..., Any]:
    """A function returning the Jacobian of func with respect to the arguments
    `argnums` (output.shape + input.shape), by reverse mode.

    Examples:
        >>> lm.func.jacrev(lambda x: x * 2)(lm.tensor([1.0, 3.0]))
        tensor([[2., 0.],
                [0., 2.]])
    """
    if has_aux:
        raise NotImplementedError("func.jacrev(has_aux=True) is not supported in lamina")

    def transformed(*args: Any) -> Any:
        nums = _argnums(argnums, len(args))

        def of(*picked: Tensor) -> Any:
            full = list(args)
            for i, t in zip(nums, picked):
                full[i] = t
            return func(*full)
        jac = _functional.jacobian(of, tuple(args[i] for i in nums),
                                   create_graph=any(args[i].requires_grad for i in nums))
        if isinstance(argnums, int):
            return tuple(j[0] for j in jac) if isinstance(jac, tuple) and \
                isinstance(jac[0], tuple) else jac[0]
        return jac
    return transformed


jacfwd = jacrev  # the same Jacobian, here by reverse mode


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """(func(*primals), a function of the cotangents giving the vector-Jacobian products
    with respect to each primal), as torch.func.vjp.

    Examples:
        >>> out, fn = lm.func.vjp(lambda x: x * 3, lm.tensor([1.0, 2.0]))
        >>> fn(lm.ones(2))
        (tensor([3., 3.]),)
    """
    out = func(*primals)

    def vjp_fn(*cotangents: Any) -> tuple[Tensor, ...]:
        v = cotangents[0] if len(cotangents) == 1 else cotangents
        return tuple(_as_tuple(_functional.vjp(func, tuple(primals), v)[1]))
    return out, vjp_fn


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def jvp(func: Callable[..., Any], primals: Any, tangents: Any) -> tuple[Any, Any]:
    """(func(*primals), J @ tangents), as torch.func.jvp.

    Examples:
        >>> lm.func.jvp(lambda x: x * 3, (lm.tensor([1.0]),), (lm.tensor([1.0]),))
        (tensor([3.]), tensor([3.]))
    """
    out, t = _functional.jvp(func, tuple(primals), tuple(tangents))
    return out, t


def linearize(func: Callable[..., Any], *primals: Tensor) -> tuple[Any, Callable[..., Any]]:
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product at the
    primals, as torch.func.linearize; each call takes one backward pass over the graph
    kept from the first (J^T u taken with create_graph=True).

    Examples:
        >>> out, jvp_fn = lm.func.linearize(lambda x: x.sin(), lm.tensor([0.0, 1.0]))
        >>> jvp_fn(lm.tensor([1.0, 1.0]))
        tensor([1.0000, 0.5403])
    """
    xs = [p.detach().requires_grad_(True) for p in primals]
    out = func(*xs)
    _, push = _functional.pushforward([out], xs)

    def jvp_fn(*tangents: Tensor) -> Tensor:
        (jt,) = push(*tangents)
        return out.detach().new_zeros(*out.shape) if jt is None else jt.detach()
    return out.detach(), jvp_fn


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: Any = None) -> Callable[..., Any]:
    """func mapped over dim `in_dims` of its arguments (one per argument, None for an
    argument passed whole; an argument may be a dict, list or tuple of tensors, each
    mapped over that dim, as a model's stacked parameters are), the results stacked
    along `out_dims`: one call per slice.

    Examples:
        >>> lm.func.vmap(lambda row: row.sum())(lm.ones(3, 2))
        tensor([2., 2., 2.])
    """

    def transformed(*args: Any) -> Any:
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        sizes = {t.shape[d] for a, d in zip(args, dims) if d is not None
                 for t in _leaves(a)}
        if len(sizes) != 1:
            raise ValueError(f"vmap: the mapped dims must have one size; got {sorted(sizes)}")
        (n,) = sizes
        results = [func(*[a if d is None else _slice(a, d, i) for a, d in zip(args, dims)])
                   for i in range(n)]
        return _stacked(results, out_dims)
    return transformed


def _stacked(results: list[Any], dims: Any) -> Any:
    """The calls' results stacked along `dims`, tensor by tensor, in their structure (a
    tuple of outputs, a dict of per-sample gradients)."""
    from lamina.functions.shape import stack

    first = results[0]
    if isinstance(first, dict):
        return {k: _stacked([r[k] for r in results], dims[k] if isinstance(dims, dict)
                            else dims) for k in first}
    if isinstance(first, (list, tuple)):
        each = dims if isinstance(dims, (tuple, list)) else (dims,) * len(first)
        return type(first)(_stacked([r[k] for r in results], d) for k, d in enumerate(each))
    return stack(results, dims)


def _flatten(tree: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """The tensors in a dict, list or tuple of them (nested), and a function that puts
    others in their places, in the same structure."""
    def rebuild(values: list[Any]) -> Any:
        it = iter(values)

        def build(t: Any) -> Any:
            if isinstance(t, dict):
                return {k: build(v) for k, v in t.items()}
            if isinstance(t, (list, tuple)):
                return type(t)(build(v) for v in t)
            return next(it)
        return build(tree)
    return _leaves(tree), rebuild


def _leaves(tree: Any) -> list[Tensor]:
    if isinstance(tree, dict):
        return [t for v in tree.values() for t in _leaves(v)]
    if isinstance(tree, (list, tuple)):
        return [t for v in tree for t in _leaves(v)]
    return [tree]


def _slice(tree: Any, d: int, i: int) -> Any:
    """Slice i along dim d of every tensor in a dict, list or tuple of them."""
    if isinstance(tree, dict):
        return {k: _slice(v, d, i) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_slice(v, d, i) for v in tree)
    return tree.select(d, i)


def stack_module_state(models: Any) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(params, buffers): each parameter and buffer of the models (of one architecture)
    stacked along a new first dim, by state-dict name, for an ensemble run by vmap and
    functional_call. The stacked parameters are new leaves an optimizer can train.

    Examples:
        >>> models = [lm.nn.Linear(3, 2) for _ in range(4)]
        >>> params, buffers = lm.func.stack_module_state(models)
        >>> params["weight"].shape, params["weight"].requires_grad
        (lamina.Size([4, 2, 3]), True)
    """
    from lamina.functions.shape import stack

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same "
                           "class.")
    params = {name: stack([dict(m.named_parameters())[name].detach() for m in models])
              .requires_grad_(p.requires_grad) for name, p in models[0].named_parameters()}
    buffers = {name: stack([dict(m.named_buffers())[name] for m in models])
               for name, _ in models[0].named_buffers()}
    return params, buffers


def hessian(func: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """A function returning the Hessian of func's one-element output with respect to the
    arguments `argnums` (input.shape + input.shape), as torch.func.hessian: the Jacobian
    of the gradient.

    Examples:
        >>> lm.func.hessian(lambda x: (x ** 3).sum())(lm.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacrev(jacrev(func, argnums), argnums)


__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "stack_module_state", "vjp", "vmap"]
