"""Run by test_python_master_worker.sh under `mpirun -np 2`: a tg.function
whose second layer runs on rank 1 (inside tg.device('/rank:1/cpu:0')),
rank 1 serving it (tensorgraph.distributed.serve). Ten training steps with
an eager SGD step between the calls, so rank 0 writes the worker's
parameters every step and they must reach it before the next call: the
losses, gradients and parameters equal a one-process tg.function's bit
for bit."""
import sys

import tensorgraph as tg
import tensorgraph.distributed as dist
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"rank {dist.get_rank()}: FAIL {what}", file=sys.stderr, flush=True)


class Net(nn.Module):
    def __init__(self, remote):
        super().__init__()
        tg.manual_seed(3)
        self.l1 = nn.Linear(8, 16)
        self.l2 = nn.Linear(16, 4)
        self.remote = remote

    def forward(self, x):
        h = F.relu(self.l1(x))
        with tg.device('/rank:1/cpu:0' if self.remote else 'cpu:0'):
            h = F.relu(self.l2(h))
        return h.sum(dim=1)


def train(remote):
    net = Net(remote)
    opt = tg.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    @tg.function(autograph=False)
    def loss_fn(x, y):
        return F.mse_loss(net(x), y)

    tg.manual_seed(5)
    data = [(tg.randn(6, 8), tg.randn(6)) for _ in range(10)]
    losses, grads = [], []
    for x, y in data:
        opt.zero_grad()
        loss = loss_fn(x, y)
        loss.backward()
        grads.append(net.l2.weight.grad.clone())
        opt.step()
        losses.append(loss.item())
    loss_fn.pull_variables()
    return losses, grads, [p.detach().clone() for p in net.parameters()]


def main():
    dist.init_process_group(backend="mpi")
    if dist.get_rank() != 0:
        dist.serve()  # until rank 0 destroys the group
        dist.destroy_process_group()
        return 0
    check(dist.get_world_size() == 2, "world size 2")
    one = train(remote=False)
    two = train(remote=True)
    check(one[0] == two[0], f"losses {one[0]} vs {two[0]}")
    check(all(a.equal(b) for a, b in zip(one[1], two[1])), "the worker layer's gradients")
    check(all(a.equal(b) for a, b in zip(one[2], two[2])), "parameters after 10 steps")
    check(one[0][-1] < one[0][0], f"the loss falls: {one[0][0]} -> {one[0][-1]}")
    try:
        dist.serve()
        check(False, "serve on rank 0 was accepted")
    except RuntimeError as e:
        check("rank 0 is the master" in str(e), f"serve on rank 0: {e}")
    dist.destroy_process_group()
    print("ok   rank 0: 10 steps over 2 ranks equal one process's" if not failures
          else f"FAIL: {len(failures)} check(s)", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
