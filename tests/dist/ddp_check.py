"""Run by test_python_ddp.sh under `mpirun -np 2`: tensorgraph.distributed
and DistributedDataParallel against one process's numbers. Each rank
trains a copy of a small network with DDP on its half of every batch and,
beside it, a plain copy on the whole batch; after every SGD step the two
copies' parameters must agree (DDP's mean of half-batch mean gradients is
the whole batch's mean gradient)."""
import sys

import tensorgraph as tg
import tensorgraph.distributed as dist
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from tensorgraph.nn.parallel import DistributedDataParallel as DDP
from tensorgraph.utils.data import DistributedSampler

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"rank {dist.get_rank()}: FAIL {what}", file=sys.stderr, flush=True)


def net():
    tg.manual_seed(7)
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10))


def main():
    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    check(world == 2, f"world size {world}, expected 2")
    check(dist.is_initialized() and dist.get_backend() == "mpi", "initialized, backend")

    # collectives
    t = tg.full((3,), float(rank + 1))
    dist.all_reduce(t)
    check(t.tolist() == [3.0, 3.0, 3.0], f"all_reduce SUM {t.tolist()}")
    t = tg.full((2,), float(rank + 1), dtype=tg.float64)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    check(t.tolist() == [1.5, 1.5], f"all_reduce AVG {t.tolist()}")
    t = tg.tensor([rank, -rank])
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    check(t.tolist() == [1, 0], f"all_reduce MAX {t.tolist()}")
    b = tg.full((2, 2), 10.0 * rank + 1)
    work = dist.broadcast(b, src=1, async_op=True)
    check(work.wait() and b.tolist() == [[11.0, 11.0], [11.0, 11.0]], f"broadcast {b.tolist()}")
    dist.barrier()

    # the sampler: the ranks' shares partition the (padded) permutation
    s = DistributedSampler(list(range(11)), shuffle=True, seed=3)
    s.set_epoch(2)
    mine = tg.tensor(list(s) + [-1] * (6 - len(s)))
    both = [tg.zeros(6, dtype=tg.int64) for _ in range(2)]
    both[rank].copy_(mine)
    for k in range(2):
        dist.broadcast(both[k], src=k)
    allidx = both[0].tolist() + both[1].tolist()
    check(len(s) == 6 and sorted(set(allidx)) == list(range(11)), f"sampler shares {allidx}")

    # DDP against the whole batch on one process
    ddp, plain = DDP(net(), bucket_cap_mb=0.0005), net()
    opt_d = tg.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    opt_p = tg.optim.SGD(plain.parameters(), lr=0.1, momentum=0.9)
    gen = tg.Generator().manual_seed(11)  # the same batches on both ranks
    for step in range(5):
        x = tg.randn(8, 1, 8, 8, generator=gen)
        y = tg.randint(0, 10, (8,), generator=gen)
        half = slice(4 * rank, 4 * rank + 4)
        opt_d.zero_grad()
        F.cross_entropy(ddp(x[half]), y[half]).backward()
        opt_d.step()
        opt_p.zero_grad()
        F.cross_entropy(plain(x), y).backward()
        opt_p.step()
        worst = max((a - b).abs().max().item()
                    for a, b in zip(ddp.module.parameters(), plain.parameters()))
        check(worst < 1e-5, f"step {step}: DDP parameters differ from one process's by {worst}")
    buckets, early = ddp._bucket_stats()
    check(buckets > 1 and early >= 1, f"buckets {buckets}, started during backward {early}")
    # no_sync: local gradients only
    with ddp.no_sync():
        ddp.zero_grad()
        F.cross_entropy(ddp(x[half]), y[half]).backward()
    grads = [ddp.module[3].bias.grad.clone() for _ in range(2)]
    for k in range(2):  # every rank calls the same collectives, same roots
        dist.broadcast(grads[k], src=k)
    check((grads[0] - grads[1]).abs().max().item() > 0, "no_sync still averaged")
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0 and not failures:
        print("ddp_check: ok (collectives, sampler, 5 DDP steps equal one process, no_sync)")
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
