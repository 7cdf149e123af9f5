"""The order of torch.unique(sorted=False) on the CPU in PyTorch 1.13: the
iteration order of a std::unordered_set that the input's elements were
inserted into one by one (libstdc++'s hashtable, which Debian's PyTorch
is built with). It is reproduced by replaying that table on the distinct
values in order of first appearance: each new value goes to the front of
the element list when its bucket is empty, else to the front of its
bucket's run; growing past the load factor rehashes into a prime bucket
count, which re-threads the list (reversing the buckets' order). Keys
hash as std::hash does: integers as themselves (as 64-bit unsigned),
floats by the bytes' 64-bit Murmur-style hash (0 for +-0), and every NaN
is a new element (NaN != NaN)."""
import bisect

import numpy as np

# libstdc++'s bucket counts (std::__detail::__prime_list, the entries below
# 2**32); the policy searches from the seventh, small requests use _FAST
_PRIMES = (
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83,
    89, 97, 103, 109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257,
    277, 293, 313, 337, 359, 383, 409, 439, 467, 503, 541, 577, 619, 661, 709, 761, 823,
    887, 953, 1031, 1109, 1193, 1289, 1381, 1493, 1613, 1741, 1879, 2029, 2179, 2357, 2549,
    2753, 2971, 3209, 3469, 3739, 4027, 4349, 4703, 5087, 5503, 5953, 6427, 6949, 7517,
    8123, 8783, 9497, 10273, 11113, 12011, 12983, 14033, 15173, 16411, 17749, 19183, 20753,
    22447, 24281, 26267, 28411, 30727, 33223, 35933, 38873, 42043, 45481, 49201, 53201,
    57557, 62233, 67307, 72817, 78779, 85229, 92203, 99733, 107897, 116731, 126271, 136607,
    147793, 159871, 172933, 187091, 202409, 218971, 236897, 256279, 277261, 299951, 324503,
    351061, 379787, 410857, 444487, 480881, 520241, 562841, 608903, 658753, 712697, 771049,
    834181, 902483, 976369, 1056323, 1142821, 1236397, 1337629, 1447153, 1565659, 1693859,
    1832561, 1982627, 2144977, 2320627, 2510653, 2716249, 2938679, 3179303, 3439651,
    3721303, 4026031, 4355707, 4712381, 5098259, 5515729, 5967347, 6456007, 6984629,
    7556579, 8175383, 8844859, 9569143, 10352717, 11200489, 12117689, 13109983, 14183539,
    15345007, 16601593, 17961079, 19431899, 21023161, 22744717, 24607243, 26622317,
    28802401, 31160981, 33712729, 36473443, 39460231, 42691603, 46187573, 49969847,
    54061849, 58488943, 63278561, 68460391, 74066549, 80131819, 86693767, 93793069,
    101473717, 109783337, 118773397, 128499677, 139022417, 150406843, 162723577, 176048909,
    190465427, 206062531, 222936881, 241193053, 260944219, 282312799, 305431229, 330442829,
    357502601, 386778277, 418451333, 452718089, 489790921, 529899637, 573292817, 620239453,
    671030513, 725980837, 785430967, 849749479, 919334987, 994618837, 1076067617,
    1164186217, 1259520799, 1362662261, 1474249943, 1594975441, 1725587117, 1866894511,
    2019773507, 2185171673, 2364114217, 2557710269, 2767159799, 2993761039, 3238918481,
    3504151727, 3791104843, 4101556399, 4294967291
)
_FAST = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)
_MUL = 0xc6a4a7935bd1e995
_SEED = 0xc70f6907
_M64 = (1 << 64) - 1


def _shift_mix(v):
    return v ^ (v >> 47)


def _hash_bits(bits, nbytes):
    """libstdc++'s _Hash_bytes of a 4- or 8-byte little-endian value"""
    h = (_SEED ^ (nbytes * _MUL)) & _M64
    data = (_shift_mix((bits * _MUL) & _M64) * _MUL) & _M64 if nbytes == 8 else bits
    h = ((h ^ data) * _MUL) & _M64
    return _shift_mix((_shift_mix(h) * _MUL) & _M64)


def _hashes(values):
    """std::hash of each value of a 1-D array, as Python ints"""
    if values.dtype == np.float64 or values.dtype == np.float32:
        nbytes = values.dtype.itemsize
        bits = values.view(np.uint64 if nbytes == 8 else np.uint32).tolist()
        return [0 if v == 0 else _hash_bits(b, nbytes) for v, b in zip(values.tolist(), bits)]
    return [int(v) & _M64 for v in values.tolist()]


class _Buckets:
    """the prime rehash policy (max load factor 1)"""

    def __init__(self):
        self.count, self.next_resize = 1, 0

    def _next_count(self, n):
        if n < len(_FAST):
            self.next_resize = _FAST[n]
            return _FAST[n]
        p = _PRIMES[bisect.bisect_left(_PRIMES, n, 6)]
        self.next_resize = p
        return p

    def grow_for(self, elements):
        """the new bucket count when one more element needs a rehash, else None"""
        if elements + 1 <= self.next_resize:
            return None
        least = max(elements + 1, 0 if self.next_resize else 11)
        if least >= self.count:
            return self._next_count(max(least + 1, self.count * 2))
        self.next_resize = self.count
        return None


def _replay(codes):
    """the iteration order (indices into codes) after inserting distinct
    keys with these hash codes in order"""
    policy = _Buckets()
    nxt = {}                     # the list: each node's successor, -1's the first
    before = {}                  # bucket -> the node before its run (-1: the head)
    for node, code in enumerate(codes):
        grown = policy.grow_for(node)
        if grown is not None:
            policy.count = grown
            before, p, last_bucket = {}, nxt.get(-1), 0
            nxt[-1] = None
            while p is not None:
                follow = nxt[p]
                b = codes[p] % grown
                if b not in before:
                    nxt[p], nxt[-1] = nxt[-1], p
                    before[b] = -1
                    if nxt[p] is not None:
                        before[last_bucket] = p
                    last_bucket = b
                else:
                    nxt[p], nxt[before[b]] = nxt[before[b]], p
                p = follow
        b = code % policy.count
        if b in before:
            nxt[node], nxt[before[b]] = nxt[before[b]], node
        else:
            nxt[node], nxt[-1] = nxt.get(-1), node
            if nxt[node] is not None:
                before[codes[nxt[node]] % policy.count] = node
            before[b] = -1
    order, p = [], nxt.get(-1)
    while p is not None:
        order.append(p)
        p = nxt[p]
    return order


def unordered_unique(flat):
    """PyTorch 1.13's unique(sorted=False) of a 1-D array: (values,
    inverse, counts), NaN outputs counted 0 and NaN inputs mapped to 0 as
    its hash-map lookups of NaN do"""
    isnan = flat != flat
    num_pos = np.flatnonzero(~isnan)
    vals, first, inv_num, counts = np.unique(flat[num_pos], return_index=True,
                                             return_inverse=True, return_counts=True)
    # the distinct numbers and every NaN, in order of first appearance
    starts = np.sort(np.concatenate([num_pos[first], np.flatnonzero(isnan)]))
    pos = starts[_replay(_hashes(flat[starts]))]  # input positions in output order
    out_vals = flat[pos]
    is_num = ~isnan[pos]
    value_index = np.searchsorted(vals, out_vals[is_num])
    rank = np.empty(len(vals), np.int64)           # numpy's value index -> output index
    rank[value_index] = np.flatnonzero(is_num)
    inverse = np.zeros(flat.shape, np.int64)
    inverse[num_pos] = rank[inv_num.reshape(-1)]
    cnt = np.zeros(len(pos), np.int64)
    cnt[is_num] = counts[value_index]
    return out_vals, inverse, cnt
