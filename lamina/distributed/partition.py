"""Model partitions: a Sequential cut into stages that live on different Ray actors.

Each cut is a bridge: the activation crosses it forward, its gradient crosses it back.
Parameter names are the unsplit model's (stage 1's "0.weight" is the model's "3.weight"
when stage 1 starts at layer 3), so gradients and state dicts compare one to one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina as lm
from lamina.distributed.cluster import spread
from lamina.nn.container import Sequential


class Stage:
    """One stage's layers, in an actor: forward keeps the graph until backward comes."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.model = lm.nn.from_config(config)
        self.x: lm.Tensor | None = None
        self.y: lm.Tensor | None = None

    def load(self, state: dict[str, np.ndarray]) -> None:
        """Take the stage's weights (names local to the stage)."""
        self.model.load_state_dict(state)

    def forward(self, x: np.ndarray, training: bool) -> np.ndarray:
        """Run the stage on an activation; keep the graph for backward."""
        self.model.train(training)
        self.x = lm.tensor(x, requires_grad=x.dtype.kind == "f")
        self.y = self.model(self.x)
        return self.y.data

    def backward(self, grad: np.ndarray) -> np.ndarray | None:
        """Backpropagate the output's gradient; return the input's."""
        self.y.backward(np.asarray(grad))
        return self.x.grad

    def gradients(self) -> dict[str, np.ndarray]:
        """The stage's parameter gradients, by local name; clears them."""
        out = {n: p.grad for n, p in self.model.named_parameters() if p.grad is not None}
        self.model.zero_grad()
        return out


class Pipeline:
    """A Sequential split at `cuts` (layer indices) into stages on separate actors.

    Example:
        >>> pipe = Pipeline(model, cuts=[2])          # layers [0, 2) and [2, end)
        >>> out = pipe.forward(x)                     # a leaf Tensor: compute the loss on it
        >>> F.cross_entropy(out, y).backward()
        >>> pipe.backward(out.grad)
        >>> grads = pipe.gradients()                  # by the unsplit model's names
    """

    def __init__(self, model: Sequential, cuts: list[int]) -> None:
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
            actor = ray.remote(Stage).options(**place).remote(part.to_config())
            ray.get(actor.load.remote(part.state_dict()))
            self.stages.append(actor)

    def forward(self, x: Any) -> lm.Tensor:
        """Run the stages in order; the result is a leaf Tensor that requires grad."""
        h = x.data if isinstance(x, lm.Tensor) else np.asarray(x)
        for stage in self.stages:
            h = self.ray.get(stage.forward.remote(h, self.training))
        return lm.tensor(h, requires_grad=True)

    def backward(self, grad: Any) -> None:
        """Send the output's gradient back through the stages, last to first."""
        g = np.asarray(grad)
        for stage in reversed(self.stages):
            g = self.ray.get(stage.backward.remote(g))

    def gradients(self) -> dict[str, np.ndarray]:
        """Every stage's parameter gradients, named as in the unsplit model."""
        out = {}
        for offset, grads in zip(self.offsets, self.ray.get(
                [s.gradients.remote() for s in self.stages])):
            for name, g in grads.items():
                index, rest = name.split(".", 1)
                out[f"{int(index) + offset}.{rest}"] = g
        return out

    def shutdown(self) -> None:
        for s in self.stages:
            self.ray.kill(s)
