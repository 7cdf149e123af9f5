"""nn.utils.rnn: pad_sequence and unpad_sequence, and PyTorch's packed
sequences (PackedSequence, pack_padded_sequence, pad_packed_sequence,
pack_sequence, unpack_sequence) that the recurrent layers take: data holds
the time steps' rows one after the other (step t: the batch_sizes[t] longest sequences),
sorted by decreasing length, sorted_indices / unsorted_indices map to and
from the caller's batch order."""
from collections import namedtuple

from ... import _C
from ..._creation import tensor

_Packed = namedtuple('PackedSequence', ['data', 'batch_sizes', 'sorted_indices',
                                        'unsorted_indices'])


class PackedSequence(_Packed):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as PyTorch's"""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data):
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs):
        return self._with_data(self.data.to(*args, **kwargs))

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _data_method(name):
    """PackedSequence.<name>(): the same packing, data converted by Tensor.<name>"""
    def method(self, *args, **kwargs):
        return self._with_data(getattr(self.data, name)(*args, **kwargs))
    method.__name__ = name
    return method


for _name in ('cpu', 'cuda', 'double', 'float', 'half', 'long', 'int', 'short',
              'char', 'byte'):
    setattr(PackedSequence, _name, _data_method(_name))


def invert_permutation(permutation):
    """the permutation's inverse (None stays None), as PyTorch's"""
    if permutation is None:
        return None
    return _C._argsort(permutation, 0, False)


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """tensors of shapes (L_i, *) padded to the longest: (L, B, *), or
    (B, L, *) with batch_first"""
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    n = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        pads = [0, 0] * (s.ndim - 1)
        padded.append(_C._pad(s, [0, n - s.shape[0]] + pads, padding_value)
                      if s.shape[0] < n else s)
    return _C.stack(padded, 0 if batch_first else 1)


def _lengths_list(lengths):
    if isinstance(lengths, _C.Tensor):
        if lengths.ndim != 1:
            raise RuntimeError(f"pack_padded_sequence: lengths must be a 1-D tensor, got "
                               f"{lengths.ndim}-D")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """input (L, B, *) (or (B, L, *)) with each sequence's length"""
    lens = _lengths_list(lengths)
    x = input.transpose(0, 1) if batch_first else input
    if len(lens) != x.shape[1]:
        raise RuntimeError(f"pack_padded_sequence: expected {x.shape[1]} lengths (the batch "
                           f"size), got {len(lens)}")
    if any(v <= 0 for v in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if max(lens) > x.shape[0]:
        raise RuntimeError(f"pack_padded_sequence: a length {max(lens)} exceeds the "
                           f"sequences' padded length {x.shape[0]}")
    sorted_indices = None
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
    else:
        order = sorted(range(len(lens)), key=lambda b: -lens[b])   # stable, as a sort
        sorted_indices = tensor(order, dtype=_C.int64)
        x = _C.index_select(x, 1, sorted_indices)
        lens = [lens[b] for b in order]
    sizes = [sum(1 for v in lens if v > t) for t in range(lens[0])]
    data = _C.cat([x[t, :n] for t, n in enumerate(sizes)], 0)
    return PackedSequence(data, tensor(sizes, dtype=_C.int64), sorted_indices)


def pack_sequence(sequences, enforce_sorted=True):
    """a list of (L_i, *) tensors packed"""
    lens = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lens, enforce_sorted=enforce_sorted)


def padded_sorted(sequence, padding_value=0.0, total_length=None):
    """(padded (L, B, *) in the packed (length-sorted) batch order, lengths)"""
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    n_batch = sizes[0] if sizes else 0
    length = len(sizes)
    if total_length is not None:
        if total_length < length:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {length}")
        length = total_length
    data, rows, start = sequence.data, [], 0
    tail = [0, 0] * (data.ndim - 1)    # _pad's pairs run from dim 0
    for n in sizes:
        step = data[start:start + n]
        rows.append(_C._pad(step, [0, n_batch - n] + tail, padding_value)
                    if n < n_batch else step)
        start += n
    if length > len(sizes):
        filler = _C._pad(data[:0], [0, n_batch] + tail, padding_value)
        rows += [filler] * (length - len(sizes))
    lens = [sum(1 for n in sizes if n > b) for b in range(n_batch)]
    return _C.stack(rows, 0), lens


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded (L, B, *) or (B, L, *) in the caller's batch order, lengths)"""
    padded, lens = padded_sorted(sequence, padding_value, total_length)
    lengths = tensor(lens, dtype=_C.int64)
    if sequence.unsorted_indices is not None:
        padded = _C.index_select(padded, 1, sequence.unsorted_indices)
        lengths = _C.index_select(lengths, 0, sequence.unsorted_indices)
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """the list of sequences (L_i, *) of a padded (L, B, *) (or (B, L, *))
    batch; unlike PyTorch's, the argument is not transposed in place"""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    lens = _lengths_list(lengths)
    return [x[b, :n] for b, n in enumerate(lens)]


def unpack_sequence(packed_sequences):
    """the list of sequences of a PackedSequence, in the caller's order"""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
