"""What minimize's first-order descent adds to its optimizer's step, as `torch.optim` has it:
weight decay as an L2 term added to the gradient (SGD's, momentum's and Adam's
`weight_decay`), and a learning rate that changes with the step (`StepLR`,
`CosineAnnealingLR`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCHEDULES = ("constant", "step", "cosine")


@dataclass(frozen=True)
class Schedule:
    """The learning rate at each step: `constant`; `step`, multiplied by `gamma` every
    `step_size` steps (StepLR); `cosine`, from the base rate down to `lr_min` along half a
    cosine over `t_max` steps, and back up over the next `t_max` (CosineAnnealingLR)."""

    kind: str = "constant"
    step_size: int = 1
    gamma: float = 0.1
    t_max: int = 1
    lr_min: float = 0.0

    def lr(self, base: float, step: int) -> float:
        """The rate of update number `step` (from 0) of a descent whose base rate is `base`."""
        if self.kind == "step":
            return base * self.gamma ** (step // self.step_size)
        if self.kind == "cosine":
            return (
                self.lr_min + (base - self.lr_min) * (1 + math.cos(math.pi * step / self.t_max)) / 2
            )
        return base


def decayed(grads: Sequence[float], data: Sequence[float], weight_decay: float) -> list[float]:
    """The gradient with the L2 term `weight_decay * p` added, as torch.optim adds it."""
    return [g + weight_decay * p for g, p in zip(grads, data, strict=True)]
