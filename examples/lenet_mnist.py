"""LeNet-5 on MNIST, written as a PyTorch user would write it: an
nn.Module subclass, a DataLoader, SGD with momentum and a training loop.
The hyper-parameters are those of `tg train lenet` (batch 64, lr 0.02,
momentum 0.9, seed 1, 2 batches prefetched), so the two can be timed side
by side (bench/lenet_python.sh).

    PYTHONPATH=build/python /usr/bin/python3 examples/lenet_mnist.py --data data/mnist
"""
import argparse
import json
import time

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from tensorgraph.utils.data import DataLoader, Subset


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def train_epoch(model, loader, opt):
    model.train()
    total, n = 0.0, 0
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item()
        n += 1
    return total / n


@tg.no_grad()
def accuracy(model, loader):
    model.eval()
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
    p.add_argument('--threads', type=int, default=0)
    p.add_argument('--prefetch', type=int, default=2)
    p.add_argument('--limit', type=int, default=0,
                   help='use only the first N images of each split, 0 = all (quick runs)')
    p.add_argument('--json', action='store_true', help='end with one JSON summary line')
    args = p.parse_args()
    if args.threads:
        tg.set_num_threads(args.threads)
    tg.manual_seed(args.seed)

    train = tg.datasets.MNIST(args.data, train=True, download=True)
    test = tg.datasets.MNIST(args.data, train=False)
    if args.limit > 0:  # a Subset: batches are collated in Python, not by the C loader
        train = Subset(train, range(min(args.limit, len(train))))
        test = Subset(test, range(min(args.limit, len(test))))
    gen = tg.Generator().manual_seed(args.seed)
    train_loader = DataLoader(train, batch_size=args.batch, shuffle=True, generator=gen,
                              prefetch_factor=args.prefetch)
    test_loader = DataLoader(test, batch_size=1000)

    model = LeNet5()
    opt = tg.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    for epoch in range(1, args.epochs + 1):
        t0 = time.perf_counter()
        loss = train_epoch(model, train_loader, opt)
        seconds = time.perf_counter() - t0
        acc = accuracy(model, test_loader)
        if not args.json:
            print(f"epoch {epoch}: train loss {loss:.4f}  test accuracy {acc * 100:.2f}%  "
                  f"{seconds:.1f} s  {len(train) / seconds:.0f} images/s")
    if args.json:
        print(json.dumps({"bench": "lenet_python", "epochs": args.epochs, "loss": round(loss, 5),
                          "test_accuracy": acc, "epoch_seconds": round(seconds, 3),
                          "threads": tg.get_num_threads()}))


if __name__ == '__main__':
    main()
