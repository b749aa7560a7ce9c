"""The nn helpers: an MLP learns a two-class problem."""

import random

import pytest

from nanograd_cli.nn import MLP, SGD, Layer, Neuron


def two_moons_like(n: int, seed: int):
    """Two noisy, interleaved classes in the plane, labelled -1 and +1."""
    rng = random.Random(seed)
    points = []
    for _ in range(n):
        label = rng.choice((-1.0, 1.0))
        x = rng.gauss(label * 0.8, 0.45)
        y = rng.gauss(-label * 0.5 + 0.3 * x * x, 0.35)
        points.append(((x, y), label))
    return points


@pytest.mark.slow
def test_mlp_learns_two_classes():
    data = two_moons_like(60, seed=1)
    model = MLP(2, [8, 8, 1], seed=3)
    optimizer = SGD(model.parameters(), lr=0.05)
    for _ in range(60):
        loss = sum(((model(x)[0] - label) ** 2 for x, label in data), start=0.0) * (1 / len(data))
        loss.backward()
        optimizer.step()
    assert loss.data < 0.25
    correct = sum((model(x)[0].data > 0) == (label > 0) for x, label in data)
    assert correct / len(data) >= 0.9


def test_parameters_and_zero_grad():
    model = MLP(3, [4, 2], seed=0)
    assert len(model.parameters()) == (3 + 1) * 4 + (4 + 1) * 2
    out = model([1.0, -2.0, 0.5])
    sum(out, start=0.0).backward()
    assert any(p.grad != 0.0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0.0 for p in model.parameters())
    assert repr(Layer(2, 1)) == "Layer[TanhNeuron(2)]"
    assert len(Neuron(5).parameters()) == 6


def test_sgd_step_moves_against_the_gradient():
    n = Neuron(1, linear=True)
    n.w[0].data, n.b.data = 1.0, 0.0
    loss = (n([2.0]) - 1.0) ** 2  # (2w + b - 1)^2 = 1 at w=1, b=0
    loss.backward()
    assert (n.w[0].grad, n.b.grad) == (4.0, 2.0)
    SGD(n.parameters(), lr=0.1).step()
    assert (n.w[0].data, n.b.data) == (0.6, -0.2)
    assert n.w[0].grad == 0.0
