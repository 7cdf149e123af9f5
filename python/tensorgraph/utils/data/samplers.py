"""torch.utils.data's samplers and dataset combinators: Sampler,
SequentialSampler, RandomSampler (with or without replacement,
num_samples), SubsetRandomSampler, WeightedRandomSampler, BatchSampler;
ConcatDataset, IterableDataset and ChainDataset. Random ones draw from a
tensorgraph Generator (the default one unless given)."""
import bisect

from ... import _C
from ..._creation import randint, randperm

__all__ = ['Sampler', 'SequentialSampler', 'RandomSampler', 'SubsetRandomSampler',
           'WeightedRandomSampler', 'BatchSampler', 'ConcatDataset', 'IterableDataset',
           'ChainDataset']


class Sampler:
    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """a permutation of the dataset (or num_samples draws with replacement)"""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, g = len(self.data_source), self.generator
        if self.replacement:
            return iter(randint(0, n, (self.num_samples,), generator=g).tolist())
        out = []
        while len(out) < self.num_samples:  # whole permutations, as PyTorch
            out += randperm(n, generator=g).tolist()
        return iter(out[:self.num_samples])

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """the given indices in a random order"""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = list(indices), generator

    def __iter__(self):
        perm = randperm(len(self.indices), generator=self.generator).tolist()
        return iter([self.indices[i] for i in perm])

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probabilities proportional to weights"""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        from ..._creation import tensor
        self.weights = weights if isinstance(weights, _C.Tensor) else tensor(list(weights))
        self.weights = self.weights.double()
        if self.weights.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(self.weights.shape)}")
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self):
        from ..._ops_more import multinomial
        draws = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        return iter(draws.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """lists of batch_size indices from sampler (the last shorter unless
    drop_last)"""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class ConcatDataset:
    """datasets one after another"""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes, total = [], 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[d - 1] if d else 0
        return self.datasets[d][idx - start]


class IterableDataset:
    """a dataset given by iteration (DataLoader batches what __iter__ yields)"""

    def __iter__(self):
        raise NotImplementedError

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)

    def __iter__(self):
        for d in self.datasets:
            yield from d
