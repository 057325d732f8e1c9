"""`lamina.amp.GradScaler` (torch.amp.GradScaler): dynamic loss scaling, on the CPU.

The loss is multiplied by the scale before backward, so that small gradients survive in
low precision; `unscale_` divides the gradients back and looks for infinities and NaNs;
`step` skips the optimizer's step where it found any; `update` halves the scale after a
skipped step and doubles it after `growth_interval` good ones. lamina trains in float32
or float64, where scaling by a power of two changes no bit of the gradients, so what it
adds here is what PyTorch's adds on the CPU: a step whose gradients overflowed or went
NaN is skipped rather than written into the weights, and the scale is PyTorch's to the
step, for scripts that log or save it.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor

READY, UNSCALED, STEPPED = 0, 1, 2


class GradScaler:
    """Dynamic loss scaling, as PyTorch's GradScaler ("cuda" warns and disables it, as
    PyTorch does on a machine without CUDA).

    Examples:
        >>> scaler = lm.amp.GradScaler("cpu", init_scale=8.0)
        >>> w = lm.ones(1, requires_grad=True); opt = lm.optim.SGD([w], lr=0.1)
        >>> scaler.scale((w * 2).sum()).backward(); w.grad
        tensor([16.])
        >>> scaler.step(opt); scaler.update(); w, scaler.get_scale()
        (tensor([0.8000], requires_grad=True), 8.0)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if enabled and str(device).split(":")[0] == "cuda":
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available. "
                          " Disabling.", UserWarning, stacklevel=2)
            enabled = False
        if growth_factor <= 1.0:
            raise ValueError(f"The growth factor must be > 1.0; got {growth_factor}")
        if backoff_factor >= 1.0:
            raise ValueError(f"The backoff factor must be < 1.0; got {backoff_factor}")
        self.enabled = enabled
        self._scale, self._growth_tracker = float(init_scale), 0
        self._scaled = False  # PyTorch's scale is made at the first scale()
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    def scale(self, outputs: Any) -> Any:
        """outputs (a tensor, or lists and tuples of them) times the scale."""
        if not self.enabled:
            return outputs
        self._scaled = True
        if isinstance(outputs, Tensor):
            return outputs * Tensor(np.array(self._scale, np.float32))
        if isinstance(outputs, Iterable) and not isinstance(outputs, (str, bytes)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": READY, "found_inf": None})

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale, in place (before clipping them),
        and note whether any is infinite or NaN."""
        if not self.enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] == STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse = np.float32(np.float64(1.0) / np.float64(self._scale))
        grads = [p.grad.array for group in optimizer.param_groups for p in group["params"]
                 if p.grad is not None]
        if any(g.dtype == np.float16 for g in grads):
            raise ValueError("Attempting to unscale FP16 gradients.")
        found = False
        for g in grads:
            g *= inverse.astype(g.dtype)
            found = found or not bool(np.isfinite(g).all())
        # None: no gradient to check, which step() and update() refuse, as PyTorch's do
        state["stage"], state["found_inf"] = UNSCALED, found if grads else None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless done already) and step, unless a gradient is infinite or NaN:
        then the step is skipped and None returned."""
        if not self.enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._state(optimizer)
        if state["stage"] == STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = STEPPED
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """The scale for the next iteration: `new_scale` if given; else backed off after a
        skipped step, grown after `growth_interval` steps in a row without one."""
        if not self.enabled:
            return
        if not self._scaled:
            raise AssertionError("Attempted update but _scale is None.  This may indicate your "
                                 "script did not use scaler.scale(loss or outputs) earlier in "
                                 "the iteration.")
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = float(np.float32(self._scale * self._growth_factor))
                    if np.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
        self._scale = float(np.float32(self._scale))  # PyTorch keeps it in float32
        self._per_optimizer.clear()

    def get_scale(self) -> float:
        """The scale, as a Python float (1.0 when disabled)."""
        return self._scale if self.enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self.enabled

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's keys: scale, growth_factor, backoff_factor, growth_interval and
        _growth_tracker ({} when disabled)."""
        if not self.enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self.enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
