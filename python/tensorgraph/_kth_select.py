"""Which element kthvalue returns, as PyTorch's CPU kernel picks it: a
quickselect (median-of-three pivot, NaN ordered above every number) over
each row, whose result among equal values (ties, several NaNs) depends on
the order of its swaps. Rows whose k-th value is unique get the stable
sort's answer, which is the same; rows where it repeats run the
quickselect on the host."""
import numpy as np


def _greater(a, b):
    """a > b, NaN above every number (PyTorch's comparator)"""
    return (a != a and b == b) or a > b


def _quickselect_index(row, k):
    """the original position of the element the quickselect leaves at k"""
    v = list(row)
    at = list(range(len(v)))

    def swap(i, j):
        v[i], v[j] = v[j], v[i]
        at[i], at[j] = at[j], at[i]

    lo, hi = 0, len(v) - 1
    while hi > lo:
        if hi == lo + 1:
            if _greater(v[lo], v[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)  # median of three to v[lo]
        if _greater(v[lo + 1], v[hi]):
            swap(lo + 1, hi)
        if _greater(v[lo], v[hi]):
            swap(lo, hi)
        if _greater(v[lo + 1], v[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, v[lo]
        while True:
            i += 1
            while _greater(pivot, v[i]):
                i += 1
            j -= 1
            while _greater(v[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return at[k]


def kth_indices(rows, k):
    """rows: a [m, n] array; the position in each row of its k-th smallest
    element (k from 1), the one PyTorch's kthvalue returns"""
    order = np.argsort(rows, axis=1, kind='stable')  # NaN last, as PyTorch's order
    out = order[:, k - 1].copy()
    if rows.shape[1] < 2:
        return out
    srt = np.take_along_axis(rows, order, axis=1)
    kth = srt[:, k - 1:k]
    same = (srt == kth) | ((srt != srt) & (kth != kth))
    for r in np.flatnonzero(same.sum(1) > 1):  # the k-th value repeats
        out[r] = _quickselect_index(rows[r].tolist(), k - 1)
    return out
