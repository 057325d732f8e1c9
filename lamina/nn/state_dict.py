"""A layer's state dict, PyTorch's: `state_dict()` and `load_state_dict()` (mixed into Layer).

The state dict is every parameter and persistent buffer by dotted name, layer by layer in
registration order (a layer's parameters, then its buffers, then its children), as
tensors that share memory with them, so `sd["fc.weight"].copy_(w)` writes the weight and
`copy.deepcopy(model.state_dict())` is a snapshot. Files hold NumPy arrays (see
`state_arrays`, which lamina's checkpoints and exporters read).
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.backend import to_numpy
from lamina.dtypes import Size


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the missing and the unexpected keys (lists)."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


class Buffer(Tensor):
    """A tensor that, assigned to a layer's attribute, registers as a buffer (PyTorch's
    `nn.Buffer`): `self.mask = nn.Buffer(lm.ones(4), persistent=False)`. The layer keeps
    a plain tensor of the same memory.

    Examples:
        >>> layer = nn.Module(); layer.steps = nn.Buffer(lm.zeros(1))
        >>> list(layer.state_dict())
        ['steps']
    """

    __slots__ = ("persistent",)

    def __init__(self, data: Any = None, *, persistent: bool = True) -> None:
        array = data.array if isinstance(data, Tensor) else (
            np.zeros((0,), np.float32) if data is None else np.asarray(data))
        super().__init__(array)
        self.persistent = persistent


class StateDictMethods:
    def state_dict(self, *, destination: dict[str, Any] | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """Every parameter and persistent buffer by dotted name, as detached tensors that
        share their memory (the parameters themselves with `keep_vars=True`); a tied
        parameter under each of its names, as PyTorch writes it.

        Args:
            destination: a dict to add the entries to (returned); a new OrderedDict where
                None.
            prefix: put before every name.
            keep_vars: give the parameters and buffers themselves, not detached views.

        Examples:
            >>> sd = nn.Linear(3, 2).state_dict()
            >>> list(sd), sd["weight"].requires_grad
            (['weight', 'bias'], False)
        """
        out: dict[str, Any] = OrderedDict() if destination is None else destination
        for path, layer in self.named_layers():
            head = f"{prefix}{path}." if path else prefix
            for name, p in layer._params.items():
                if p is not None:
                    out[head + name] = p if keep_vars else p.detach()
            skip = layer.__dict__.get("_non_persistent", ())
            for name, b in layer._buffers.items():
                if b is not None and name not in skip:
                    out[head + name] = b if keep_vars else b.detach()
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy values into parameters and buffers by name, keeping each one's dtype.

        Args:
            state_dict: name -> tensor or array; a PyTorch state dict's names fit as they
                are.
            strict: raise when a key is missing or unexpected. Shape mismatches always raise.
            assign: accepted for PyTorch's signature; values are always copied in.

        Returns:
            (missing_keys, unexpected_keys), a named tuple as PyTorch's (both empty when
            strict).

        Raises:
            RuntimeError: PyTorch's "Error(s) in loading state_dict for ..." listing every
                missing and unexpected key (when strict) and every shape that does not
                fit (always); nothing is loaded then.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"{type(self).__name__}.load_state_dict: expected a mapping of "
                            f"names to arrays (a state_dict()); got "
                            f"{type(state_dict).__name__}")
        state_dict = OrderedDict(state_dict)  # the pre-hooks may change it; the caller's stays
        hooked = self._run_load_pre_hooks(state_dict, strict)
        self._size_lazy_layers(state_dict)
        targets = dict(self.state_dict(keep_vars=True))
        missing = [k for k in targets if k not in state_dict]
        unexpected = [k for k in state_dict if k not in targets]
        values = {k: np.asarray(to_numpy(v.array) if isinstance(v, Tensor) else v)
                  for k, v in state_dict.items() if k in targets}
        errors = [f"size mismatch for {k}: copying a param with shape {Size(values[k].shape)} "
                  f"from checkpoint, the shape in current model is {t.shape}."  # PyTorch's words
                  for k, t in targets.items() if k in values and values[k].shape != t.shape]
        if errors or not hooked:  # without post-hooks, strict errors stop it before a write
            self._raise_load_errors(errors, strict, missing, unexpected)
        for k, v in values.items():
            target = targets[k]
            target.array[...] = v.astype(target.dtype, copy=False)
        keys = IncompatibleKeys(missing, unexpected)
        if hooked:  # PyTorch's order: post-hooks (which may clear keys), then strictness
            for _, layer in self.named_layers():
                for hook in list(layer.__dict__.get("_load_state_dict_post_hooks", {}).values()):
                    hook(layer, keys)
            self._raise_load_errors([], strict, keys.missing_keys, keys.unexpected_keys)
        return keys

    def _raise_load_errors(self, errors: list[str], strict: bool, missing: list[str],
                           unexpected: list[str]) -> None:
        errors = list(errors)
        if strict and unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if strict and missing:
            errors.insert(0, "Missing key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))

    def _run_load_pre_hooks(self, state_dict: dict[str, Any], strict: bool) -> bool:
        """Each layer's load pre-hooks (which may rename or drop entries, for old
        checkpoints), with PyTorch's arguments; whether any layer has post-hooks."""
        errors: list[str] = []
        post = False
        for path, layer in self.named_layers():
            for hook in list(layer.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
                hook(layer, state_dict, f"{path}." if path else "", {}, strict, [], [], errors)
            post = post or bool(layer.__dict__.get("_load_state_dict_post_hooks"))
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return post

    def register_load_state_dict_pre_hook(self, hook: Any) -> Any:
        """Call `hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` before a load reads this module's entries: it may
        rename or drop them in state_dict (a copy: the caller's stays), or add error
        messages, which stop the load.

        Examples:
            >>> fc = nn.Linear(2, 1)
            >>> def rename(m, sd, prefix, *rest):
            ...     if prefix + "w" in sd: sd[prefix + "weight"] = sd.pop(prefix + "w")
            >>> h = fc.register_load_state_dict_pre_hook(rename)
            >>> fc.load_state_dict({"w": lm.ones(1, 2), "bias": lm.zeros(1)})
            <All keys matched successfully>
        """
        return self._hook("_load_state_dict_pre_hooks", hook)

    def register_load_state_dict_post_hook(self, hook: Any) -> Any:
        """Call `hook(module, incompatible_keys)` after a load: it may clear keys from the
        missing or unexpected lists, and a strict load raises only for what is left.

        Examples:
            >>> fc = nn.Linear(2, 1)
            >>> h = fc.register_load_state_dict_post_hook(lambda m, k: k.missing_keys.clear())
            >>> fc.load_state_dict({"weight": lm.ones(1, 2)})
            <All keys matched successfully>
        """
        return self._hook("_load_state_dict_post_hooks", hook)

    def _size_lazy_layers(self, state_dict: Mapping[str, Any]) -> None:
        """Give each lazy layer that has not run yet (nn.LazyLinear, ...) the sizes the state
        dict's entries for it have, as PyTorch's load does."""
        for path, layer in list(self.named_layers()):
            size = getattr(layer, "materialize_from_state", None)
            if size is None or not layer.has_uninitialized_params():
                continue
            head = f"{path}." if path else ""
            size({k[len(head):]: v for k, v in state_dict.items()
                  if k.startswith(head) and "." not in k[len(head):]})


def state_arrays(model: Any) -> dict[str, np.ndarray]:
    """`model.state_dict()` as NumPy copies (a checkpoint's or an exporter's), or a plain
    name -> array/tensor mapping as arrays."""
    state = model.state_dict() if hasattr(model, "state_dict") else dict(model)
    return {k: np.array(to_numpy(v.array) if isinstance(v, Tensor) else v)
            for k, v in state.items()}
