"""Forward hooks (`register_forward_pre_hook`, `register_forward_hook`), PyTorch's: run in
the order registered (or first with `prepend`), given the keyword arguments too with
`with_kwargs`, and, with `always_call`, run even when forward raises."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

# Hook keys, unique in the process as PyTorch's handle ids are: a flag left by a removed
# hook can never apply to a later one.
_ids = itertools.count()


class RemovableHandle:
    """What registering a hook returns: `remove()` unregisters it."""

    def __init__(self, hooks: dict[int, Any], key: int, *flags: dict[int, Any]) -> None:
        self.hooks, self.key, self.flags = hooks, key, flags

    @property
    def id(self) -> int:
        return self.key

    def remove(self) -> None:
        self.hooks.pop(self.key, None)
        for table in self.flags:
            table.pop(self.key, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class ForwardHookMethods:
    def _table(self, name: str) -> dict[int, Any]:
        table = self.__dict__.get(name)
        if table is None:
            table = {}
            object.__setattr__(self, name, table)
        return table

    def _hook(self, table: str, hook: Callable[..., Any], prepend: bool = False,
              flags: tuple[str, ...] = ()) -> RemovableHandle:
        """Add `hook` to the table (and its key to each flag table named)."""
        hooks = self._table(table)
        key = next(_ids)
        hooks[key] = hook
        if prepend:  # first in the order the hooks run
            hooks_in_order = {key: hook, **{k: v for k, v in hooks.items() if k != key}}
            hooks.clear()
            hooks.update(hooks_in_order)
        marked = [self._table(name) for name in flags]
        for flagged in marked:
            flagged[key] = True
        return RemovableHandle(hooks, key, *marked)

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call `hook(module, args)` before each forward; a returned value replaces the
        arguments (a tuple, or one value). With `with_kwargs`, `hook(module, args,
        kwargs)`, which may return new `(args, kwargs)`.

        Examples:
            >>> layer = nn.Linear(2, 2)
            >>> h = layer.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
            >>> bool((layer(lm.ones(1, 2)) == layer.bias).all())
            True
        """
        flags = ("_forward_pre_hooks_with_kwargs",) if with_kwargs else ()
        return self._hook("_forward_pre_hooks", hook, prepend, flags)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call `hook(module, args, output)` after each forward; a returned value replaces
        the output. With `with_kwargs`, `hook(module, args, kwargs, output)`; with
        `always_call`, it runs (with output None) even when forward raises.

        Examples:
            >>> layer = nn.Linear(2, 2)
            >>> seen = []
            >>> h = layer.register_forward_hook(lambda m, args, out: seen.append(out.shape))
            >>> _ = layer(lm.ones(5, 2)); seen
            [lamina.Size([5, 2])]
        """
        flags = (*(("_forward_hooks_with_kwargs",) if with_kwargs else ()),
                 *(("_forward_hooks_always_called",) if always_call else ()))
        return self._hook("_forward_hooks", hook, prepend, flags)

    def _call_with_hooks(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """forward with the pre- and post-hooks around it (only modules that have hooks);
        the always_call hooks run when a pre-hook or forward raises."""
        d = self.__dict__
        try:
            args, kwargs = self._pre_hooks(args, kwargs)
            if "_backward_hooks" in d or "_backward_pre_hooks" in d:
                from lamina.nn.backward_hooks import call_with_backward_hooks

                out = call_with_backward_hooks(self, self.forward, args, kwargs)
            else:
                out = self.forward(*args, **kwargs)
        except Exception:
            self._always_called(args, kwargs)
            raise
        with_kwargs = d.get("_forward_hooks_with_kwargs", {})
        for key, hook in list(d.get("_forward_hooks", {}).items()):
            changed = (hook(self, args, kwargs, out) if key in with_kwargs
                       else hook(self, args, out))
            if changed is not None:
                out = changed
        return out

    def _pre_hooks(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                   ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        d = self.__dict__
        with_kwargs = d.get("_forward_pre_hooks_with_kwargs", {})
        for key, hook in list(d.get("_forward_pre_hooks", {}).items()):
            if key in with_kwargs:
                changed = hook(self, args, kwargs)
                if changed is not None:
                    if not (isinstance(changed, tuple) and len(changed) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {changed}.")
                    args, kwargs = changed
            else:
                changed = hook(self, args)
                if changed is not None:
                    args = changed if isinstance(changed, tuple) else (changed,)
        return args, kwargs

    def _always_called(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """The always_call forward hooks, after forward raised: their own errors are
        warned of, as PyTorch does, so that forward's reaches the caller."""
        d = self.__dict__
        always, with_kwargs = (d.get("_forward_hooks_always_called", {}),
                               d.get("_forward_hooks_with_kwargs", {}))
        for key, hook in list(d.get("_forward_hooks", {}).items()):
            if key not in always:
                continue
            try:
                hook(self, args, kwargs, None) if key in with_kwargs else hook(self, args, None)
            except Exception as e:  # noqa: BLE001 - forward's error is the one to raise
                warnings.warn("module forward hook with ``always_call=True`` raised an exception "
                              f"that was silenced as another error was raised in forward: "
                              f"{e}", stacklevel=3)
