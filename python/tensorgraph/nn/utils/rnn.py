"""nn.utils.rnn: pad_sequence."""
from ... import _C


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

