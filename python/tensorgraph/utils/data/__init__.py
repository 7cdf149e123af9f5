"""tensorgraph.utils.data: Dataset, TensorDataset, Subset, random_split and
DataLoader (batch_size, shuffle, drop_last, sampler or batch_sampler,
batch_size=None, iterable datasets, a seeded generator, background
prefetch); the samplers, ConcatDataset and IterableDataset are in
samplers.py. Datasets that live in C (TensorDataset of two tensors, MNIST)
are loaded by the C loader, whose prefetch thread gathers the next batches
without the GIL while the training step runs; other datasets are indexed
in Python, with batches prepared ahead on a Python thread."""
import queue
import threading

from ... import _C
from ..._creation import randperm
from .samplers import (BatchSampler, ChainDataset, ConcatDataset, IterableDataset,  # noqa: F401
                       RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                       WeightedRandomSampler)


def get_worker_info():
    """None: batches are prepared by the loader's prefetch thread, never
    in worker processes (num_workers sets how far ahead), so code asking
    always runs where PyTorch's main process would"""
    return None


class Dataset:
    def __getitem__(self, index):
        raise NotImplementedError

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    def __init__(self, *tensors):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            # PyTorch asserts it: an AssertionError, raised even under python -O here
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors
        self._c = None

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]

    def _c_dataset(self):
        if len(self.tensors) != 2:
            return None
        if self._c is None:
            self._c = _C._dataset_from_tensors(*self.tensors)
        return self._c


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, i):
        return self.dataset[self.indices[i]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Subsets of the given lengths, or fractions of the dataset (the
    remainder spread one by one over the first, as PyTorch)"""
    lengths = list(lengths)
    if lengths and all(isinstance(f, float) and 0 <= f <= 1 for f in lengths) and \
            abs(sum(lengths) - 1) < 1e-9 and sum(lengths) != len(dataset):
        n = len(dataset)
        sizes = [int(f * n) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = randperm(len(dataset), generator=generator).tolist()
    out, start = [], 0
    for n in lengths:
        out.append(Subset(dataset, perm[start:start + n]))
        start += n
    return out


def default_collate(batch):
    from ..._ops import stack
    from ..._creation import tensor
    first = batch[0]
    if isinstance(first, _C.Tensor):
        return stack(list(batch))
    if isinstance(first, float):  # Python floats are doubles: float64, as PyTorch
        return tensor(list(batch), dtype=_C.float64)
    if isinstance(first, (int, bool)):
        return tensor(list(batch))
    if type(first).__module__ == 'numpy' and hasattr(first, 'shape'):  # arrays, numpy scalars
        return stack([tensor(b) for b in batch])
    if isinstance(first, tuple) and hasattr(first, '_fields'):  # a namedtuple stays one
        return type(first)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(first, (tuple, list)):
        # PyTorch: a list of the fields collated (a tuple too); strings come
        # back as the tuple of the batch's strings
        return [default_collate(s) if not isinstance(s[0], str) else s for s in zip(*batch)]
    if isinstance(first, dict):
        return {k: default_collate([b[k] for b in batch]) for k in first}
    return batch


def default_convert(data):
    """what a DataLoader with batch_size=None hands out for a sample, as
    PyTorch's: numpy arrays and numpy numbers as tensors, inside tuples
    (which become lists), lists, namedtuples and dicts; the rest as it is"""
    from ..._creation import tensor
    if type(data).__module__ == 'numpy' and hasattr(data, 'shape') and \
            getattr(data.dtype, 'kind', 'O') not in 'USO':
        return tensor(data)
    if isinstance(data, tuple) and hasattr(data, '_fields'):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):
        return [default_convert(d) for d in data]
    if isinstance(data, dict):
        return {k: default_convert(v) for k, v in data.items()}
    return data


class DistributedSampler:
    """PyTorch's DistributedSampler: this rank's share of the dataset's
    indices. With shuffle, a permutation drawn from seed + epoch (call
    set_epoch each epoch; every rank draws the same one), then padded by
    repeating its start to a multiple of num_replicas (or, with drop_last,
    cut to one), then every num_replicas-th index from rank on. The
    permutation is tensorgraph's generator's, not PyTorch's."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: pass num_replicas and rank, or call "
                                   "tensorgraph.distributed.init_process_group first")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if num_replicas < 1:
            raise ValueError(f"DistributedSampler: num_replicas must be >= 1, got {num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = (n - num_replicas + num_replicas - 1) // num_replicas
        else:
            self.num_samples = -(-n // num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = _C.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * -(-pad // len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, drop_last=False, generator=None,
                 prefetch_factor=2, pin_memory=False, persistent_workers=False, timeout=0,
                 worker_init_fn=None):
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
        elif batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if isinstance(dataset, IterableDataset) and (shuffle or sampler is not None):
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                             "and sampler options")
        self.batch_sampler = batch_sampler
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.sampler, self.drop_last = sampler, drop_last
        self.collate_fn = collate_fn or default_collate
        self.generator = generator if generator is not None else _C.default_generator
        self.prefetch = max(int(prefetch_factor), 0) * max(num_workers, 1)
        self._epoch = 0
        c = getattr(dataset, '_c_dataset', None)
        c = c() if c and collate_fn is None and batch_size is not None else None
        # a sampler's batches from a C dataset are gathered in C (one call
        # per batch, not one per sample)
        self._c_gather = c if sampler is not None else None
        c = c if sampler is None else None
        self._loader = None
        if c is not None:
            self._loader = _C.Loader(c, batch_size, bool(shuffle), self.generator._next_u64(),
                                     bool(drop_last), self.prefetch)

    def __len__(self):
        if self._loader is not None:
            return len(self._loader)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        if self._loader is not None:
            self._loader.set_epoch(self._epoch)
            self._epoch += 1
            return _CIterator(self._loader)
        return _PyIterator(self)

    def _index_batches(self):
        """lists of indices, one per batch (one index for batch_size=None,
        which _PyIterator hands out uncollated)"""
        if self.batch_sampler is not None:
            yield from self.batch_sampler
            return
        if isinstance(self.dataset, IterableDataset):
            yield from self._iterable_batches()
            return
        n = len(self.dataset)
        if self.sampler is not None:
            order = list(self.sampler)
        elif self.shuffle:
            order = randperm(n, generator=self.generator).tolist()
        else:
            order = range(n)
        if self.batch_size is None:
            yield from order
            return
        for i in range(0, len(order), self.batch_size):  # a sampler may give fewer than n
            idx = order[i:i + self.batch_size]
            if len(idx) < self.batch_size and self.drop_last:
                return
            yield idx


    def _iterable_batches(self):
        """an iterable dataset's items, grouped (as _Items, which _make
        collates instead of indexing)"""
        if self.batch_size is None:
            for item in self.dataset:
                yield _Items([item], single=True)
            return
        batch = []
        for item in self.dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield _Items(batch)
                batch = []
        if batch and not self.drop_last:
            yield _Items(batch)


class _Items(list):
    """samples themselves (from an iterable dataset), not indices"""

    def __init__(self, items, single=False):
        super().__init__(items)
        self.single = single


class _CIterator:
    def __init__(self, loader):
        self._loader = loader

    def __iter__(self):
        return self

    def __next__(self):
        batch = self._loader.next()
        if batch is None:
            raise StopIteration
        return list(batch)


class _PyIterator:
    """batches made on a background thread, `prefetch` ahead"""
    _END = object()

    def __init__(self, dl):
        self._dl = dl
        self._batches = dl._index_batches()
        if dl.prefetch > 0:
            self._q = queue.Queue(maxsize=dl.prefetch)
            self._stop = False
            self._thread = threading.Thread(target=self._fill, daemon=True)
            self._thread.start()
        else:
            self._q = None

    def _make(self, idx):
        dl = self._dl
        if isinstance(idx, _Items):
            return (dl.collate_fn(idx[0]) if dl.collate_fn is not default_collate
                    else default_convert(idx[0])) if idx.single else dl.collate_fn(list(idx))
        if dl.batch_size is None and dl.batch_sampler is None:  # one sample, not collated
            item = dl.dataset[idx]
            return dl.collate_fn(item) if dl.collate_fn is not default_collate \
                else default_convert(item)
        if dl._c_gather is not None:
            return list(dl._c_gather.get(list(idx)))
        return dl.collate_fn([dl.dataset[i] for i in idx])

    def _fill(self):
        try:
            for idx in self._batches:
                if self._stop:
                    return
                self._q.put((True, self._make(idx)))
        except BaseException as e:  # handed to the consumer
            self._q.put((False, e))
            return
        self._q.put((True, self._END))

    def __iter__(self):
        return self

    def __next__(self):
        if self._q is None:
            return self._make(next(self._batches))
        ok, item = self._q.get()
        if not ok:
            raise item
        if item is self._END:
            raise StopIteration
        return item

    def __del__(self):
        if self._q is not None:
            self._stop = True
