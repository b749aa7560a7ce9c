"""Training a 2-16-16-1 network on two moons: `nanograd minimize --data` against PyTorch and
micrograd; and its loss and gradient on each of 10,000 rows, `nanograd grad --points` against
PyTorch's `vmap`; whole processes.

Run: python benchmarks/mlp.py [RUNS]   (after `pip install -e . --group bench`)

200 rows of two moons (seeded), a 2-16-16-1 network with tanh, the mean squared error over
every row, 300 steps of Adam (lr 0.01) from one start, written to a temporary folder and read
by all three:
* nanograd: `nanograd minimize -f mlp.txt --data moons.csv --W1 @W1.npy ... --steps 300`, the
  network written as one source (docs/arrays.md);
* PyTorch: a script that imports torch, reads the same files and takes the same 300 steps
  (CPU, float64, `torch.optim.Adam`); its final loss is printed beside ours;
* micrograd: a script with `micrograd.nn.MLP(2, [16, 16, 1])` (ReLU, micrograd's only
  non-linearity) and the same loss, updated with Adam written out; 300 steps take it minutes,
  so it takes MICROGRAD_STEPS and its time is scaled to 300 steps (start-up included once).

Then the loss of each of 10,000 rows and its gradient by every parameter and input (343
columns), from the same start: `nanograd grad -f mlp.txt --points rows.csv ... -o out.parquet`
against a script that computes the same with `torch.func.vmap(grad(...))` and writes the same
columns with PyArrow.

Each process runs RUNS times (default 3), alternating; the medians are compared.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import report

ROWS, STEPS, MICROGRAD_STEPS, LR, POINTS = 200, 300, 3, 0.01, 10_000

SOURCE = """\
h1 = tanh(W1 @ [x1, x2] + b1)
h2 = tanh(W2 @ h1 + b2)
p = w3 @ h2 + c
(p - y)**2
"""

TORCH = """\
import sys, numpy as np, torch
folder = sys.argv[1]
data = np.loadtxt(folder + "/moons.csv", delimiter=",", skiprows=1)
X, y = torch.tensor(data[:, :2]), torch.tensor(data[:, 2])
names = ["W1", "b1", "W2", "b2", "w3", "c"]
p = {n: torch.tensor(np.load(f"{folder}/{n}.npy"), requires_grad=True) for n in names}
optimizer = torch.optim.Adam(p.values(), lr=float(sys.argv[3]))
for _ in range(int(sys.argv[2])):
    optimizer.zero_grad()
    h1 = torch.tanh(X @ p["W1"].T + p["b1"])
    h2 = torch.tanh(h1 @ p["W2"].T + p["b2"])
    loss = ((h2 @ p["w3"] + p["c"] - y) ** 2).mean()
    loss.backward()
    optimizer.step()
print(loss.item())
"""

TORCH_POINTS = """\
import sys, numpy as np, torch, pyarrow as pa, pyarrow.parquet as pq
from torch.func import grad, vmap
folder = sys.argv[1]
data = np.loadtxt(folder + "/rows.csv", delimiter=",", skiprows=1)
names = ["W1", "b1", "W2", "b2", "w3", "c"]
p = {n: torch.tensor(np.load(f"{folder}/{n}.npy")) for n in names}
def loss(params, x1, x2, y):
    h1 = torch.tanh(params["W1"] @ torch.stack([x1, x2]) + params["b1"])
    h2 = torch.tanh(params["W2"] @ h1 + params["b2"])
    return (params["w3"] @ h2 + params["c"] - y) ** 2
x1, x2, y = (torch.tensor(data[:, k]) for k in range(3))
values = vmap(loss, in_dims=(None, 0, 0, 0))(p, x1, x2, y)
grads = vmap(grad(loss, argnums=(0, 1, 2, 3)), in_dims=(None, 0, 0, 0))(p, x1, x2, y)
columns = {"x1": data[:, 0], "x2": data[:, 1], "y": data[:, 2], "value": values.numpy()}
for n in names:
    g = grads[0][n].reshape(len(data), -1).numpy()
    for k in range(g.shape[1]):
        columns[f"d_{n}[{k}]"] = g[:, k]
for k, n in zip((1, 2, 3), ("x1", "x2", "y")):
    columns[f"d_{n}"] = grads[k].numpy()
pq.write_table(pa.table(columns), folder + "/torch_out.parquet")
"""

MICROGRAD = """\
import sys, math, numpy as np
from micrograd.nn import MLP
folder = sys.argv[1]
data = np.loadtxt(folder + "/moons.csv", delimiter=",", skiprows=1).tolist()
model = MLP(2, [16, 16, 1])
lr, m, v = float(sys.argv[3]), {}, {}
for step in range(1, int(sys.argv[2]) + 1):
    model.zero_grad()
    loss = sum((model([a, b]) - c) ** 2 for a, b, c in data) * (1.0 / len(data))
    loss.backward()
    for k, q in enumerate(model.parameters()):
        m[k] = 0.9 * m.get(k, 0.0) + 0.1 * q.grad
        v[k] = 0.999 * v.get(k, 0.0) + 0.001 * q.grad**2
        q.data -= lr * (m[k] / (1 - 0.9**step)) / (math.sqrt(v[k] / (1 - 0.999**step)) + 1e-8)
print(loss.data)
"""


def write_problem(folder: Path) -> None:
    """Two moons, the start of every parameter, the source and the two scripts."""
    rng = np.random.default_rng(0)
    t = rng.uniform(0, np.pi, ROWS // 2)
    upper = np.c_[np.cos(t), np.sin(t)]
    lower = np.c_[1 - np.cos(t), 0.5 - np.sin(t)]
    X = np.r_[upper, lower] + rng.normal(0, 0.1, (ROWS, 2))
    y = np.r_[np.ones(ROWS // 2), -np.ones(ROWS // 2)]
    lines = [f"{a!r},{b!r},{c!r}" for (a, b), c in zip(X.tolist(), y.tolist(), strict=True)]
    (folder / "moons.csv").write_text("x1,x2,y\n" + "\n".join(lines) + "\n")
    shapes = {"W1": (16, 2), "b1": (16,), "W2": (16, 16), "b2": (16,), "w3": (16,), "c": ()}
    for name, shape in shapes.items():
        np.save(folder / f"{name}.npy", rng.normal(0, 0.5, shape))
    (folder / "mlp.txt").write_text(SOURCE)
    (folder / "torch_mlp.py").write_text(TORCH)
    (folder / "micrograd_mlp.py").write_text(MICROGRAD)
    (folder / "torch_points.py").write_text(TORCH_POINTS)
    X = rng.normal(size=(POINTS, 2))
    y = np.sign(rng.normal(size=POINTS))
    lines = [f"{a!r},{b!r},{c!r}" for (a, b), c in zip(X.tolist(), y.tolist(), strict=True)]
    (folder / "rows.csv").write_text("x1,x2,y\n" + "\n".join(lines) + "\n")


def timed(command: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    # minimize exits 1 where it has not converged to --tol 0, which is no failure here
    converging = command[1] == "minimize" and done.returncode == 1 and "converge" in done.stderr
    if done.returncode != 0 and not converging:
        sys.exit(f"{' '.join(command[:3])} failed: {done.stderr}")
    return seconds, done.stdout


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    nanograd = shutil.which("nanograd") or sys.exit("install the package first")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_problem(folder)
        starts = [f"--{n}=@{folder / n}.npy" for n in ("W1", "b1", "W2", "b2", "w3", "c")]
        ours = [nanograd, "minimize", "-f", str(folder / "mlp.txt"), "--data"]
        ours += [str(folder / "moons.csv"), *starts, "--steps", str(STEPS), "--lr", str(LR)]
        ours += ["--tol", "0", "--format", "json"]
        torch_run = [sys.executable, str(folder / "torch_mlp.py"), name, str(STEPS), str(LR)]
        micro = [sys.executable, str(folder / "micrograd_mlp.py"), name]
        micro += [str(MICROGRAD_STEPS), str(LR)]
        points = [nanograd, "grad", "-f", str(folder / "mlp.txt"), "--points"]
        points += [str(folder / "rows.csv"), *starts, "-o", str(folder / "out.parquet")]
        torch_points = [sys.executable, str(folder / "torch_points.py"), name]
        commands = {
            "nanograd": ours,
            "PyTorch": torch_run,
            "micrograd": micro,
            "nanograd --points": points,
            "PyTorch vmap": torch_points,
        }
        times: dict[str, list[float]] = {label: [] for label in commands}
        losses: dict[str, str] = {}
        for _ in range(runs):
            for label, command in commands.items():
                seconds, out = timed(command)
                times[label].append(seconds)
                if label in ("nanograd", "PyTorch"):
                    losses[label] = (
                        str(json.loads(out)["value"]) if label == "nanograd" else out.strip()
                    )
    ours_s = statistics.median(times["nanograd"])
    torch_s = statistics.median(times["PyTorch"])
    micro_s = statistics.median(times["micrograd"]) * STEPS / MICROGRAD_STEPS
    print(f"{ROWS} rows, 2-16-16-1 tanh network, {STEPS} Adam steps; medians of {runs} runs")
    print(f"nanograd minimize --data   {ours_s:8.2f} s")
    print(f"PyTorch (CPU, float64)     {torch_s:8.2f} s   {ours_s / torch_s:.2f}x PyTorch's time")
    print(
        f"micrograd nn.MLP (ReLU)    {micro_s:8.2f} s   (scaled from {MICROGRAD_STEPS} steps)"
        f"   {micro_s / ours_s:.0f}x nanograd's time"
    )
    print(f"final loss: nanograd {losses['nanograd']}, PyTorch {losses['PyTorch']}")
    ours_p = statistics.median(times["nanograd --points"])
    torch_p = statistics.median(times["PyTorch vmap"])
    print(f"{POINTS:,} rows, the loss and its gradient on each (343 columns, to Parquet)")
    print(f"nanograd grad --points     {ours_p:8.2f} s")
    print(f"PyTorch vmap(grad)         {torch_p:8.2f} s   {ours_p / torch_p:.2f}x PyTorch's time")
    report.ratio(
        "MLP training, s", "2-16-16-1, 200 rows, 300 Adam steps", ours_s, "PyTorch", torch_s
    )
    report.ratio("MLP training, s", "2-16-16-1, 200 rows, 300 steps", ours_s, "micrograd", micro_s)
    report.ratio("MLP gradients, s", "10,000 rows, 343 columns", ours_p, "PyTorch vmap", torch_p)


if __name__ == "__main__":
    main()
