"""Model partitions: a Sequential cut into stages that live on different Ray actors.

Each cut is a bridge: the activation crosses it forward, its gradient crosses it back.
Parameter names are the unsplit model's (stage 1's "0.weight" is the model's "3.weight"
when stage 1 starts at layer 3), so gradients and state dicts compare one to one.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor, tensor
from lamina.distributed.cluster import spread
from lamina.nn.container import Sequential
from lamina.nn.registry import from_config
from lamina.nn.state_dict import state_arrays
from lamina.optim.config import from_config as optim_from_config


class Stage:
    """One stage's layers, in an actor: forward keeps the graph until backward comes; with
    an optimizer config, the stage updates its own parameters (`step`)."""

    def __init__(self, config: dict[str, Any], optimizer: Mapping[str, Any] | None = None,
                 offset: int = 0) -> None:
        self.model = from_config(config)
        self.optimizer = None
        if optimizer:  # groups match the unsplit model's names; a stage may hold none of some
            named = [(_shifted(n, offset), p) for n, p in self.model.named_parameters()]
            self.optimizer = optim_from_config(optimizer, named, strict=False)
        self.x: Tensor | None = None
        self.y: Tensor | None = None

    def load(self, state: dict[str, np.ndarray]) -> None:
        """Take the stage's weights and buffers (names local to the stage)."""
        self.model.load_state_dict(state)

    def state_dict(self) -> dict[str, np.ndarray]:
        """The stage's weights and buffers (names local to the stage)."""
        return state_arrays(self.model)

    def forward(self, x: np.ndarray, training: bool) -> np.ndarray:
        """Run the stage on an activation; keep the graph for backward."""
        self.model.train(training)
        self.x = tensor(x, requires_grad=x.dtype.kind == "f")
        self.y = self.model(self.x)
        return self.y.array

    def backward(self, grad: np.ndarray) -> np.ndarray | None:
        """Backpropagate the output's gradient; return the input's."""
        self.y.backward(np.asarray(grad))
        return None if self.x.grad is None else self.x.grad.array

    def gradients(self) -> dict[str, np.ndarray]:
        """The stage's parameter gradients, by local name; clears them."""
        out = {n: p.grad.array for n, p in self.model.named_parameters() if p.grad is not None}
        self.model.zero_grad()
        return out

    def step(self) -> None:
        """Update the stage's parameters from their gradients, then clear the gradients."""
        if self.optimizer is None:
            raise RuntimeError("Stage.step: the stage has no optimizer; build the Pipeline "
                               "with optimizer={'type': 'SGD', 'lr': ...}")
        if all(p.grad is None for p in self.model.parameters()):
            raise RuntimeError("Stage.step: no gradients to apply; call Pipeline.backward "
                               "first (Pipeline.gradients() hands them out and clears them)")
        self.optimizer.step()
        self.optimizer.zero_grad()


class Pipeline:
    """A Sequential split at `cuts` (layer indices) into stages on separate actors. Each
    stage holds its part of the weights and, given an optimizer config, updates them
    itself, so no actor ever holds the whole model.

    Examples:
        >>> pipe = Pipeline(model, cuts=[2], optimizer={"type": "SGD", "lr": 0.1})
        >>> # optimizer groups, if any, match the unsplit model's names ("*.bias", "3.*")
        >>> out = pipe.forward(x)                     # a leaf Tensor: compute the loss on it
        >>> F.cross_entropy(out, y).backward()
        >>> pipe.backward(out.grad)
        >>> pipe.step()                               # every stage updates its own part
        >>> model.load_state_dict(pipe.state_dict())  # by the unsplit model's names

    Without an optimizer, `gradients()` hands out the gradients by the unsplit model's
    names (and clears them), for an update made elsewhere.
    """

    def __init__(self, model: Sequential, cuts: list[int],
                 optimizer: Mapping[str, Any] | None = None) -> None:
        import ray

        bounds = [0, *sorted(cuts), len(model)]
        if len(set(bounds)) != len(bounds) or bounds[1] <= 0 or bounds[-2] >= len(model):
            raise ValueError(f"Pipeline: cuts must lie strictly inside 0..{len(model)}; "
                             f"got {cuts}")
        self.ray, self.training = ray, True
        self.offsets = bounds[:-1]
        self.stages = []
        for (a, b), place in zip(zip(bounds, bounds[1:]), spread(len(bounds) - 1)):
            part = Sequential(*[model[i] for i in range(a, b)])
            actor = ray.remote(Stage).options(**place).remote(part.to_config(), optimizer, a)
            ray.get(actor.load.remote(state_arrays(part)))
            self.stages.append(actor)

    def forward(self, x: Any) -> Tensor:
        """Run the stages in order; the result is a leaf Tensor that requires grad."""
        h = x.array if isinstance(x, Tensor) else np.asarray(x)
        for stage in self.stages:
            h = self.ray.get(stage.forward.remote(h, self.training))
        return tensor(h, requires_grad=True)

    def backward(self, grad: Any) -> None:
        """Send the output's gradient back through the stages, last to first."""
        g = np.asarray(grad)
        for stage in reversed(self.stages):
            g = self.ray.get(stage.backward.remote(g))

    def train(self, mode: bool = True) -> Pipeline:
        """Run later forwards in training mode (dropout on, batch statistics) or not."""
        self.training = mode
        return self

    def eval(self) -> Pipeline:
        """Run later forwards in eval mode (`train(False)`)."""
        return self.train(False)

    def step(self) -> None:
        """Every stage applies its optimizer to its gradients, all at once."""
        self.ray.get([s.step.remote() for s in self.stages])

    def gradients(self) -> dict[str, np.ndarray]:
        """Every stage's parameter gradients, named as in the unsplit model; clears them."""
        return self._gather([s.gradients.remote() for s in self.stages])

    def state_dict(self) -> dict[str, np.ndarray]:
        """Every stage's weights and buffers, named as in the unsplit model."""
        return self._gather([s.state_dict.remote() for s in self.stages])

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Send each stage its part of a state dict named as in the unsplit model."""
        parts: list[dict[str, Any]] = [{} for _ in self.stages]
        for name, value in state.items():
            stage = bisect.bisect_right(self.offsets, int(name.split(".", 1)[0])) - 1
            parts[stage][_shifted(name, -self.offsets[stage])] = np.asarray(value)
        self.ray.get([s.load.remote(part) for s, part in zip(self.stages, parts)])

    def _gather(self, refs: list[Any]) -> dict[str, np.ndarray]:
        return {_shifted(name, offset): value
                for offset, values in zip(self.offsets, self.ray.get(refs))
                for name, value in values.items()}

    def shutdown(self) -> None:
        """Stop the stage actors."""
        for s in self.stages:
            self.ray.kill(s)


def _shifted(name: str, offset: int) -> str:
    """A parameter name with its layer index moved by `offset` ("0.weight" in a stage
    starting at layer 3 is the model's "3.weight")."""
    index, rest = name.split(".", 1)
    return f"{int(index) + offset}.{rest}"
