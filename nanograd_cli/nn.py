"""A small neural-network library on top of Value: Neuron, Layer, MLP and an SGD step."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import cast

from .engine import Number, Value


class Module:
    """Something with parameters."""

    def parameters(self) -> list[Value]:
        """The Values an optimizer moves: none for a module of none."""
        return []

    def zero_grad(self) -> None:
        """Set every parameter's gradient to 0."""
        for p in self.parameters():
            p.grad = 0.0


class Neuron(Module):
    """tanh(w . x + b), or without the tanh when `linear`."""

    def __init__(self, inputs: int, linear: bool = False, rng: random.Random | None = None):
        rng = rng or random.Random()
        self.w: list[Value] = [Value(rng.uniform(-1.0, 1.0)) for _ in range(inputs)]
        self.b: Value = Value(0.0)
        self.linear = linear

    def __call__(self, x: Sequence[Value | Number]) -> Value:
        act = self.b
        for wi, xi in zip(self.w, x, strict=True):
            act = act + wi * xi
        return act if self.linear else act.tanh()

    def parameters(self) -> list[Value]:
        """The weights, then the bias."""
        return [*self.w, self.b]

    def __repr__(self) -> str:
        return f"{'Linear' if self.linear else 'Tanh'}Neuron({len(self.w)})"


class Layer(Module):
    """`outputs` neurons reading the same inputs."""

    def __init__(
        self,
        inputs: int,
        outputs: int,
        linear: bool = False,
        rng: random.Random | None = None,
    ):
        self.neurons: list[Neuron] = [Neuron(inputs, linear, rng) for _ in range(outputs)]

    def __call__(self, x: Sequence[Value | Number]) -> list[Value]:
        return [n(x) for n in self.neurons]

    def parameters(self) -> list[Value]:
        """Every neuron's parameters, neuron by neuron."""
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        return f"Layer[{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """A multi-layer perceptron: tanh hidden layers and a linear output layer."""

    def __init__(self, inputs: int, sizes: Sequence[int], seed: int | None = None):
        rng = random.Random(seed)
        widths = [inputs, *sizes]
        self.layers: list[Layer] = [
            Layer(widths[i], widths[i + 1], linear=i == len(sizes) - 1, rng=rng)
            for i in range(len(sizes))
        ]

    def __call__(self, x: Sequence[Value | Number]) -> list[Value]:
        for layer in self.layers:
            x = layer(x)
        # (a list of Values from the last layer; an MLP of no layers returns x as it is)
        return cast("list[Value]", x)

    def parameters(self) -> list[Value]:
        """Every layer's parameters, from the first layer to the last."""
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP[{', '.join(str(layer) for layer in self.layers)}]"


class SGD:
    """Plain gradient descent: p -= lr * p.grad, then the gradients are zeroed.

    `step()` moves the parameters; `update(data, grads)` is the same step on plain lists of
    their values (changed in place) and gradients, for a caller that holds no Values.
    """

    def __init__(self, parameters: Sequence[Value], lr: float = 0.05):
        self.parameters: list[Value] = list(parameters)
        self.lr = lr

    def step(self) -> None:
        """Move every parameter by its gradient (`update`), then zero the gradients."""
        data = [p.data for p in self.parameters]
        self.update(data, [p.grad for p in self.parameters])
        for p, moved in zip(self.parameters, data, strict=True):
            p.data = moved
            p.grad = 0.0

    def update(self, data: list[float], grads: Sequence[float]) -> None:
        """One step on the parameters' values `data` (changed in place) by `grads`."""
        lr = self.lr
        for i, g in enumerate(grads):
            data[i] -= lr * g


class Momentum(SGD):
    """Gradient descent with momentum: v = beta * v + grad; p -= lr * v."""

    def __init__(self, parameters: Sequence[Value], lr: float = 0.01, beta: float = 0.9):
        super().__init__(parameters, lr)
        self.beta = beta
        self.velocity: list[float] = [0.0] * len(self.parameters)

    def update(self, data: list[float], grads: Sequence[float]) -> None:
        """One step with momentum on `data` (changed in place) by `grads`."""
        lr, beta, velocity = self.lr, self.beta, self.velocity
        for i, g in enumerate(grads):
            velocity[i] = v = beta * velocity[i] + g
            data[i] -= lr * v


class Adam(SGD):
    """Adam (Kingma and Ba, 2015), with PyTorch's defaults."""

    def __init__(
        self,
        parameters: Sequence[Value],
        lr: float = 0.001,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ):
        super().__init__(parameters, lr)
        self.betas = betas
        self.eps = eps
        self.m: list[float] = [0.0] * len(self.parameters)
        self.v: list[float] = [0.0] * len(self.parameters)
        self.t: int = 0

    def update(self, data: list[float], grads: Sequence[float]) -> None:
        """One Adam step on `data` (changed in place) by `grads`, bias-corrected."""
        b1, b2 = self.betas
        self.t += 1
        lr, eps, m, v = self.lr, self.eps, self.m, self.v
        keep1, keep2 = 1 - b1, 1 - b2
        correction1, correction2 = 1 - b1**self.t, 1 - b2**self.t
        for i, g in enumerate(grads):
            m[i] = mi = b1 * m[i] + keep1 * g
            v[i] = vi = b2 * v[i] + keep2 * g * g
            m_hat = mi / correction1
            v_hat = vi / correction2
            data[i] -= lr * m_hat / (v_hat**0.5 + eps)
