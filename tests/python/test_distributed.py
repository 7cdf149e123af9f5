"""tensorgraph.distributed, DistributedDataParallel and DistributedSampler
in a world of one (the suite runs without mpirun; tests/dist runs them on
2 ranks): PyTorch's names and errors, the sampler's index lists equal to
PyTorch's where no random permutation is involved, DDP leaving one
process's gradients as they are."""
import pytest

import tensorgraph as tg
import tensorgraph.distributed as dist
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from tensorgraph.nn.parallel import DistributedDataParallel as DDP
from tensorgraph.utils.data import DataLoader, DistributedSampler, TensorDataset

from conftest import needs_torch, torch

pytestmark = pytest.mark.skipif(not dist.is_mpi_available(),
                                reason="tensorgraph was built without MPI")


@pytest.fixture
def world():
    dist.init_process_group(backend="mpi")
    yield
    dist.destroy_process_group()


def test_before_init():
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="init_process_group"):
        DDP(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="num_replicas and rank"):
        DistributedSampler(range(4))
    with pytest.raises(ValueError, match="backend 'nccl'"):
        dist.init_process_group(backend="nccl")
    with pytest.raises(ValueError, match="rank=1"):
        dist.init_process_group(backend="mpi", rank=1)
    assert not dist.is_initialized()


def test_world_of_one(world):
    assert dist.is_initialized() and dist.get_backend() == "mpi"
    assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
    t = tg.tensor([1.5, -2.0])
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert t.tolist() == [1.5, -2.0]
    assert dist.broadcast(t, 0, async_op=True).wait()
    dist.barrier()
    with pytest.raises(RuntimeError, match="twice"):
        dist.init_process_group()
    with pytest.raises(Exception, match="contiguous"):
        dist.all_reduce(tg.zeros(2, 3).t())
    with pytest.raises(Exception, match="not a rank"):
        dist.broadcast(t, 1)
    with pytest.raises(TypeError, match="Tensor"):
        dist.all_reduce([1.0])


@needs_torch
@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 5, False),
                                                  (12, 4, False), (7, 2, True)])
def test_sampler_like_torch(n, replicas, drop_last):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_sampler_in_pytorchs_module():
    """torch.utils.data.distributed.DistributedSampler is the same class"""
    import tensorgraph.utils.data.distributed as module
    from tensorgraph.utils.data.distributed import DistributedSampler as by_import
    assert by_import is DistributedSampler is module.DistributedSampler
    assert tg.utils.data.distributed is module


def test_sampler_shuffles_by_epoch():
    shares = [DistributedSampler(range(11), 2, r, seed=5) for r in range(2)]
    first = [list(s) for s in shares]
    assert sorted(set(first[0] + first[1])) == list(range(11)) and len(first[0]) == 6
    assert [list(s) for s in shares] == first  # same epoch, same order
    for s in shares:
        s.set_epoch(1)
    assert [list(s) for s in shares] != first
    with pytest.raises(ValueError, match="Invalid rank 2"):
        DistributedSampler(range(4), 2, 2)


def test_loader_with_sampler():
    ds = TensorDataset(tg.arange(10.0), tg.arange(10))
    dl = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, 2, 1, shuffle=False))
    assert len(dl) == 3
    assert [y.tolist() for _, y in dl] == [[1, 3], [5, 7], [9]]


def test_ddp_world_of_one(world):
    tg.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    ref = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    ref.load_state_dict(model.state_dict())
    ddp = DDP(model, bucket_cap_mb=1e-6)  # a bucket per parameter
    x, y = tg.randn(5, 4), tg.tensor([0, 1, 2, 1, 0])
    F.cross_entropy(ddp(x), y).backward()
    F.cross_entropy(ref(x), y).backward()
    for a, b in zip(model.parameters(), ref.parameters()):
        assert (a.grad - b.grad).abs().max().item() == 0
    assert ddp._bucket_stats()[0] == 4
    assert list(ddp.state_dict())[0] == "module.0.weight"
