"""utils.data's samplers, batch_sampler, batch_size=None, ConcatDataset,
IterableDataset and fractional random_split, against PyTorch's outputs
(everything deterministic compared as is; random ones by their
invariants)."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


def _show(v):
    if hasattr(v, 'tolist'):
        return v.tolist()
    if isinstance(v, dict):
        return {k: _show(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_show(x) for x in v]
    return v


def _run(L):
    D = L.utils.data

    class DS(D.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {'x': L.tensor([float(i)]), 'y': i, 'name': 'n%d' % i}

    class It(D.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    bs = D.BatchSampler(D.SequentialSampler(range(5)), 2, False)
    out = [sorted(D.SubsetRandomSampler([0, 2])), list(bs), len(bs)]
    dl = D.DataLoader(DS(), batch_sampler=bs)
    out += [[b['y'].tolist() for b in dl], len(dl)]
    cd = D.ConcatDataset([DS(), DS()])
    out += [[len(cd), cd[6]['y'], cd[-1]['y']], (DS() + DS())[7]['y']]
    dl = D.DataLoader(DS(), batch_size=None)
    out += [[next(iter(dl))['y'], len(dl)]]
    out += [list(D.DataLoader(list(range(5)), batch_size=2, collate_fn=lambda b: sum(b)))]
    out += [[_show(b) for b in D.DataLoader(It(), batch_size=3)]]
    out += [[_show(b) for b in D.DataLoader(It(), batch_size=3, drop_last=True)]]
    out += [[_show(b) for b in D.DataLoader(It(), batch_size=None)][:3]]
    out += [sorted(len(s) for s in D.random_split(range(10), [0.5, 0.3, 0.2]))]
    out += [len(list(D.RandomSampler(range(5), replacement=True, num_samples=9)))]
    out += [sorted(D.RandomSampler(range(5))), len(list(D.WeightedRandomSampler([0.1, 0.9, 0.0], 20)))]
    out += [2 not in list(D.WeightedRandomSampler([0.1, 0.9, 0.0], 20))]
    out += [_show(next(iter(D.DataLoader([np.ones(2, dtype=np.float32)] * 3, batch_size=2))))]
    return out


@needs_torch
def test_samplers_and_loader_forms_match_torch():
    assert _run(tg) == _run(torch)


def test_loader_option_errors():
    D = tg.utils.data
    bs = D.BatchSampler(D.SequentialSampler(range(5)), 2, False)
    with pytest.raises(ValueError, match="mutually exclusive"):
        D.DataLoader(list(range(5)), batch_sampler=bs, batch_size=2)

    class It(D.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    with pytest.raises(ValueError, match="IterableDataset"):
        D.DataLoader(It(), shuffle=True)
    with pytest.raises(ValueError, match="batch_size"):
        D.BatchSampler(D.SequentialSampler(range(5)), 0, False)
    with pytest.raises(ValueError, match="num_samples"):
        D.RandomSampler(range(5), num_samples=0)
    with pytest.raises(AssertionError):
        D.ConcatDataset([])


def test_get_worker_info_is_none_outside_workers():
    assert tg.utils.data.get_worker_info() is None
