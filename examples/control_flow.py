"""A model whose forward runs a data-dependent while loop, trained as a graph.

The refiner applies its cell to the hidden state until the update it makes
is small (or 12 steps): how many steps depends on the batch. tg.function
converts the Python `while` into one while_loop node of the graph (its
condition is a tensor), so a single compiled step serves every batch, and
its gradient runs the loop backwards (the values each iteration saved,
popped in reverse). The script trains it, checks the graph's loss and
gradients against eager Python on one batch, and writes the graph's DOT
picture, the loop body drawn as a cluster.

    PYTHONPATH=build/python /usr/bin/python3 examples/control_flow.py [OUT.dot]
"""
import sys

import numpy as np

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F


class Refiner(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.enc = nn.Linear(n_in, n_hidden)
        self.cell = nn.Linear(n_hidden, n_hidden)
        self.out = nn.Linear(n_hidden, 1)

    def forward(self, x):
        h = tg.tanh(self.enc(x))
        steps = 0
        delta = h.abs().mean()
        while delta > 0.05 and steps < 12:   # data-dependent trip count
            update = 0.5 * tg.tanh(self.cell(h)) - 0.5 * h
            h = h + update
            delta = update.abs().mean()
            steps += 1
        return self.out(h).squeeze(1), steps


def batches(n_batches, batch, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n_batches):
        x = rng.normal(size=(batch, 4)) * rng.uniform(0.2, 2.0)
        y = np.sin(x).sum(axis=1)
        yield tg.tensor(x), tg.tensor(y)


def main(dot_path="control_flow.dot", n_batches=300):
    tg.manual_seed(0)
    model = Refiner(4, 16).double()
    opt = tg.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)

    def loss_fn(x, y):
        pred, steps = model(x)
        return F.mse_loss(pred, y), steps

    step = tg.function(loss_fn)

    # one batch both ways: the graph follows the loop as eager Python does
    x, y = next(batches(1, 32, seed=1))
    eager_loss, eager_steps = loss_fn(x, y)
    eager_loss.backward()
    eager_grads = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    loss, steps = step(x, y)
    loss.backward()
    grad_err = max(float(np.abs(p.grad.numpy() - g).max())
                   for p, g in zip(model.parameters(), eager_grads))
    model.zero_grad()
    print(f"check: eager loss {eager_loss.item():.12f} ({eager_steps} steps), graph loss "
          f"{loss.item():.12f} ({int(steps)} steps), max gradient difference {grad_err:.2e}")

    trip_counts, losses = set(), []
    for i, (x, y) in enumerate(batches(n_batches, 32)):
        loss, steps = step(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        trip_counts.add(int(steps))
        losses.append(loss.item())
        if i % 50 == 0 or i == n_batches - 1:
            print(f"step {i:3d}  loss {np.mean(losses[-50:]):.4f}  loop steps {int(steps)}")
    print(f"traced {step.trace_count} time(s) for loop trip counts {sorted(trip_counts)}")
    step.graph.to_dot(dot_path)
    print(f"wrote {dot_path} (render: dot -Tsvg {dot_path} -o control_flow.svg)")
    return losses, trip_counts, step.trace_count


if __name__ == "__main__":
    main(*sys.argv[1:2])
