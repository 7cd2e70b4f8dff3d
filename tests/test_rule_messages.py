"""Messages tell the truth of each case: what a leak costs depends on the loop it is in."""

from __future__ import annotations

import textwrap

import pytest

from tensorlint.engine import lint_source

LOOP = """
import torch


def run(model, loader, optimizer):
    total = 0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
{backward}        total += loss
    return total


def backpropagate(loss, optimizer):
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    ("backward", "says"),
    [
        ("", "no `backward()` frees them"),
        ("loss.backward()\noptimizer.step()\n", "grow on the host"),
        ("backpropagate(loss, optimizer)\n", "grow on the host"),
        ("loss.backward(retain_graph=True)\noptimizer.step()\n", "`backward(retain_graph=True)` frees none of them"),
    ],
)
def test_tl004_says_what_the_loop_frees(backward: str, says: str) -> None:
    assert says in _only_tl004_message(LOOP.format(backward=textwrap.indent(backward, " " * 8)))


STEP = """
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.total = 0.0

    def train_step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
{backward}        self.total += loss
"""


@pytest.mark.parametrize(
    ("backward", "says"),
    [
        ("", "every call's autograd graph stays chained to it"),
        ("loss.backward()\nself.optimizer.step()\n", "grow on the host every call"),
    ],
)
def test_tl004_across_steps_says_what_the_step_frees(backward: str, says: str) -> None:
    assert says in _only_tl004_message(STEP.format(backward=textwrap.indent(backward, " " * 8)))


def _only_tl004_message(source: str) -> str:
    [message] = [f.message for f in lint_source(source, "train.py", codes=("TL004",))]
    return message


FORWARD_STORE = """
from torch import nn


class Encoder(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.kept = {kept}

    def forward(self, x, sample_id: str):
        out = self.net(x)
        {store}
        return out
"""


@pytest.mark.parametrize(
    ("kept", "store", "says"),
    [
        ("[]", "self.kept.append(out.detach())", "grows by the tensor's size each call"),
        ("{}", "self.kept[sample_id] = out.detach()", "grows by the tensor's size with every new key"),
    ],
)
def test_tl001_says_how_often_the_container_grows(kept: str, store: str, says: str) -> None:
    source = FORWARD_STORE.format(kept=kept, store=store)
    [message] = [f.message for f in lint_source(source, "model.py", codes=("TL001",))]
    assert says in message
