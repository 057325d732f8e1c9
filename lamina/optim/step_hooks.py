"""Optimizer step hooks (PyTorch's register_step_pre_hook / register_step_post_hook):
functions called around every `step()`, for logging, gradient surgery or schedules.

Every optimizer class's own `step` is wrapped once (Optimizer.__init_subclass__), so a
subclass that writes its own step gets the hooks too."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


class RemovableHandle:
    """What registering a hook returns: `remove()` unregisters it."""

    def __init__(self, hooks: dict[int, Any], key: int) -> None:
        self.hooks, self.key = hooks, key

    def remove(self) -> None:
        self.hooks.pop(self.key, None)


def with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """`step` with the optimizer's pre-hooks before it and its post-hooks after, each
    given (optimizer, args, kwargs), args starting with the optimizer as in PyTorch (a
    pre-hook's returned (args, kwargs) replaces them); once, where a step calls another's."""
    @functools.wraps(step)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        hooked = self.__dict__
        if hooked.get("_in_step") or not ("_step_pre_hooks" in hooked
                                          or "_step_post_hooks" in hooked):
            return step(self, *args, **kwargs)
        args = (self, *args)  # as PyTorch passes them: the optimizer first
        for hook in list(hooked.get("_step_pre_hooks", {}).values()):
            changed = hook(self, args, kwargs)
            if changed is not None:
                args, kwargs = changed
        hooked["_in_step"] = True
        try:
            result = step(*args, **kwargs)
        finally:
            hooked["_in_step"] = False
        for hook in list(hooked.get("_step_post_hooks", {}).values()):
            hook(self, args, kwargs)
        return result
    run.with_hooks = True  # type: ignore[attr-defined]
    return run


class StepHookMethods:
    """The optimizer's methods that register the hooks."""

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call `hook(optimizer, args, kwargs)` before each step (args begin with the
        optimizer, as PyTorch's); a returned (args, kwargs) pair replaces them.

        Examples:
            >>> opt = lm.optim.SGD([lm.zeros(1, requires_grad=True)], lr=0.1)
            >>> seen = []
            >>> h = opt.register_step_pre_hook(lambda o, a, k: seen.append("pre"))
            >>> opt.step(); seen
            ['pre']
        """
        return self._add_step_hook("_step_pre_hooks", hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call `hook(optimizer, args, kwargs)` after each step.

        Examples:
            >>> opt = lm.optim.SGD([lm.zeros(1, requires_grad=True)], lr=0.1)
            >>> h = opt.register_step_post_hook(lambda o, a, k: None); h.remove()
        """
        return self._add_step_hook("_step_post_hooks", hook)

    def _add_step_hook(self, table: str, hook: Callable[..., Any]) -> RemovableHandle:
        hooks = self.__dict__.setdefault(table, {})
        key = max(hooks, default=-1) + 1
        hooks[key] = hook
        return RemovableHandle(hooks, key)
