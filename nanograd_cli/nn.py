"""A small neural-network library on top of Value: Neuron, Layer, MLP and an SGD step."""

from __future__ import annotations

import random
from collections.abc import Sequence

from .engine import Number, Value


class Module:
    """Something with parameters."""

    def parameters(self) -> list[Value]:
        return []

    def zero_grad(self) -> None:
        """Set every parameter's gradient to 0."""
        for p in self.parameters():
            p.grad = 0.0


class Neuron(Module):
    """tanh(w . x + b), or without the tanh when `linear`."""

    def __init__(self, inputs: int, linear: bool = False, rng: random.Random | None = None):
        rng = rng or random.Random()
        self.w = [Value(rng.uniform(-1.0, 1.0)) for _ in range(inputs)]
        self.b = Value(0.0)
        self.linear = linear

    def __call__(self, x: Sequence[Value | Number]) -> Value:
        act = self.b
        for wi, xi in zip(self.w, x, strict=True):
            act = act + wi * xi
        return act if self.linear else act.tanh()

    def parameters(self) -> list[Value]:
        return [*self.w, self.b]

    def __repr__(self) -> str:
        return f"{'Linear' if self.linear else 'Tanh'}Neuron({len(self.w)})"


class Layer(Module):
    """`outputs` neurons reading the same inputs."""

    def __init__(self, inputs: int, outputs: int, **neuron_options):
        self.neurons = [Neuron(inputs, **neuron_options) for _ in range(outputs)]

    def __call__(self, x: Sequence[Value | Number]) -> list[Value]:
        return [n(x) for n in self.neurons]

    def parameters(self) -> list[Value]:
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        return f"Layer[{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """A multi-layer perceptron: tanh hidden layers and a linear output layer."""

    def __init__(self, inputs: int, sizes: Sequence[int], seed: int | None = None):
        rng = random.Random(seed)
        widths = [inputs, *sizes]
        self.layers = [
            Layer(widths[i], widths[i + 1], linear=i == len(sizes) - 1, rng=rng)
            for i in range(len(sizes))
        ]

    def __call__(self, x: Sequence[Value | Number]) -> list[Value]:
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP[{', '.join(str(layer) for layer in self.layers)}]"


class SGD:
    """Plain gradient descent: p -= lr * p.grad, then the gradients are zeroed."""

    def __init__(self, parameters: Sequence[Value], lr: float = 0.05):
        self.parameters = list(parameters)
        self.lr = lr

    def step(self) -> None:
        for p in self.parameters:
            p.data -= self.lr * p.grad
            p.grad = 0.0
