"""LeNet-5 on MNIST, data parallel over MPI ranks, written as a PyTorch DDP
script: swap `import torch...` for `import tensorgraph...` and it runs.

    mpirun -np 2 /usr/bin/python3 examples/ddp_mnist.py --data data/mnist

(as root add --allow-run-as-root; on a machine with fewer cores than
ranks, --oversubscribe). Each rank trains on its DistributedSampler share
of the data, batch --batch per rank; DistributedDataParallel averages the
gradients during backward; rank 0 prints and saves.
"""
import argparse
import json
import time

import tensorgraph as torch  # the swapped import: the rest is PyTorch's code
import tensorgraph.distributed as dist
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from tensorgraph.nn.parallel import DistributedDataParallel as DDP
from tensorgraph.utils.data import DataLoader, DistributedSampler


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


@torch.no_grad()
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
    p.add_argument('--batch', type=int, default=32, help='per rank')
    p.add_argument('--lr', type=float, default=0.02)
    p.add_argument('--momentum', type=float, default=0.9)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--limit', type=int, default=0, help='first N training images only')
    p.add_argument('--save', help='rank 0 saves the model state_dict here')
    p.add_argument('--json', action='store_true', help='rank 0 ends with a JSON line')
    args = p.parse_args()

    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)
    if rank == 0:  # one rank downloads, the others wait for it
        torch.datasets.MNIST(args.data, train=True, download=True)
    dist.barrier()
    train = torch.datasets.MNIST(args.data, train=True)
    if args.limit:
        train = torch.utils.data.Subset(train, range(args.limit))
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True,
                                 seed=args.seed)
    loader = DataLoader(train, batch_size=args.batch, sampler=sampler)

    model = DDP(LeNet5())
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    t0 = time.time()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        total = torch.zeros(2, dtype=torch.float64)
        for x, y in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            total += torch.tensor([loss.item(), 1.0], dtype=torch.float64)
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"epoch {epoch + 1}: train loss {total[0].item() / total[1].item():.4f}",
                  flush=True)
    seconds = time.time() - t0
    if rank == 0:
        test = torch.datasets.MNIST(args.data, train=False)
        acc = accuracy(model.module, DataLoader(test, batch_size=1000))
        print(f"test accuracy {100 * acc:.2f}% ({world} ranks, {seconds:.1f} s)", flush=True)
        if args.save:
            torch.save(model.module.state_dict(), args.save)
        if args.json:
            print(json.dumps({"ranks": world, "train_seconds": round(seconds, 3),
                              "final_train_loss": total[0].item() / total[1].item(),
                              "test_accuracy": acc}))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == '__main__':
    main()
