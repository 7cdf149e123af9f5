"""LeNet-5 on MNIST split over two processes, TensorFlow style: the
convolutions run on rank 0 and the classifier on rank 1, inside one
compiled step (tg.function). Rank 0 runs this program; rank 1 only serves
the part of the graph placed on its device.

    mpirun -np 2 /usr/bin/python3 examples/model_parallel_mnist.py --data data/mnist

(as root add --allow-run-as-root; with fewer cores than ranks,
--oversubscribe). Rank 0 traces the step once: the nodes made under
tg.device('/rank:1/cpu:0') are placed on rank 1, the session cuts the graph
there into two partitions joined by Send/Recv, ships rank 1 its partition
and runs both each step. The classifier's parameters live on rank 1: the
SGD step on rank 0 updates them here and they are sent over before the
next step; `step.pull_variables()` brings rank 1's values back before
evaluating. See docs/DISTRIBUTED.md, "Master and workers".
"""
import argparse
import json
import time

import tensorgraph as tg
import tensorgraph.distributed as dist
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from tensorgraph.utils.data import DataLoader

WORKER = '/rank:1/cpu:0'


class SplitLeNet5(nn.Module):
    """LeNet-5 whose classifier runs on the worker's device when traced"""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2).flatten(1)
        with tg.device(WORKER):  # eager code ignores it; a traced graph places by it
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)


@tg.no_grad()
def accuracy(model, loader):
    correct = seen = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
        seen += y.shape[0]
    return correct / seen


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--data', default='data/mnist')
    p.add_argument('--epochs', type=int, default=1)
    p.add_argument('--batch', type=int, default=64)
    p.add_argument('--lr', type=float, default=0.02)
    p.add_argument('--momentum', type=float, default=0.9)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--limit', type=int, default=0, help='first N training images only')
    p.add_argument('--json', action='store_true', help='end with a JSON line')
    args = p.parse_args()

    dist.init_process_group(backend="mpi")
    if dist.get_rank() != 0:
        dist.serve()  # runs rank 0's partitions until rank 0 is done
        dist.destroy_process_group()
        return
    if dist.get_world_size() != 2:
        raise SystemExit("run this under mpirun -np 2")
    tg.manual_seed(args.seed)
    train = tg.datasets.MNIST(args.data, train=True, download=True)
    if args.limit:
        train = tg.utils.data.Subset(train, range(args.limit))
    loader = DataLoader(train, batch_size=args.batch, shuffle=True)
    model = SplitLeNet5()
    opt = tg.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)

    @tg.function
    def loss_of(x, y):
        return F.cross_entropy(model(x), y)

    t0 = time.time()
    for epoch in range(args.epochs):
        total, steps = 0.0, 0
        for x, y in loader:
            opt.zero_grad()
            loss = loss_of(x, y)
            loss.backward()
            opt.step()
            total, steps = total + loss.item(), steps + 1
        print(f"epoch {epoch + 1}: train loss {total / steps:.4f}", flush=True)
    seconds = time.time() - t0
    loss_of.pull_variables()  # the classifier's values from rank 1 (equal here)
    test = tg.datasets.MNIST(args.data, train=False)
    acc = accuracy(model, DataLoader(test, batch_size=1000))
    print(f"test accuracy {100 * acc:.2f}% (2 ranks, {seconds:.1f} s)", flush=True)
    if args.json:
        print(json.dumps({"ranks": 2, "train_seconds": round(seconds, 3),
                          "final_train_loss": total / steps, "test_accuracy": acc}))
    dist.destroy_process_group()


if __name__ == '__main__':
    main()
