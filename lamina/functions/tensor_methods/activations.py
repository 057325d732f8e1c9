"""Tensor methods for the activations PyTorch puts on Tensor: sigmoid, tanh, relu,
softmax and log_softmax (the ops are in lamina.functions.activation and
.activation_softmax)."""

from __future__ import annotations

from typing import Any


class ActivationMethods:
    """sigmoid, tanh, relu, softmax, log_softmax."""

    __slots__ = ()

    def sigmoid(self) -> Any:
        """1 / (1 + e ** -self), computed without overflow.

        Examples:
            >>> lm.tensor([0.0]).sigmoid()
            tensor([0.5000])
        """
        from lamina.functions.activation import sigmoid

        return sigmoid(self)

    def tanh(self) -> Any:
        """The hyperbolic tangent, elementwise.

        Examples:
            >>> lm.tensor([0.0]).tanh()
            tensor([0.])
        """
        from lamina.functions.activation import tanh

        return tanh(self)

    def relu(self) -> Any:
        """max(self, 0); the gradient at 0 is 0.

        Examples:
            >>> lm.tensor([-1.0, 2.0]).relu()
            tensor([0., 2.])
        """
        from lamina.functions.activation import relu

        return relu(self)

    def softmax(self, dim: int, dtype: Any = None) -> Any:
        """exp(x) / sum(exp(x)) along `dim`.

        Examples:
            >>> lm.zeros(1, 4).softmax(dim=1)
            tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
        """
        from lamina.functions.activation_softmax import softmax

        return softmax(self if dtype is None else self.to(dtype), dim)

    def log_softmax(self, dim: int, dtype: Any = None) -> Any:
        """log(softmax(x)) along `dim`, computed stably.

        Examples:
            >>> lm.zeros(1, 2).log_softmax(1).exp()
            tensor([[0.5000, 0.5000]])
        """
        from lamina.functions.activation_softmax import log_softmax

        return log_softmax(self if dtype is None else self.to(dtype), dim)
