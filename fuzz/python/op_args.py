"""Arguments built to agree for the ops fuzz/python/ops.py cannot reach with
independent random values: convolutions and pools of every rank, products,
norms, losses and indexing, with hostile attributes (strides, padding,
dilation, groups, out-of-range targets and indices, wrong bias sizes)."""


def special_args(name, rng, tg):
    """structured arguments for ops whose inputs must agree; None: use the generic"""
    def dt():
        return rng.choice([tg.float32, tg.float32, tg.float64])

    def maybe_nc(t):
        r = rng.random()
        if r < 0.15 and t.ndim >= 2:
            return t.transpose(-1, -2).contiguous().transpose(-1, -2)
        if r < 0.25 and t.ndim >= 1 and t.shape[0] >= 1:
            return tg.cat([t, t], 0)[::2]
        return t

    def small(lo, hi):
        return rng.randint(lo, hi) if rng.random() < 0.93 else rng.choice([0, -1, 2**31, 2**62])

    for nd, base in ((1, 'conv1d'), (2, 'conv2d'), (3, 'conv3d')):
        if name in (base, 'conv_transpose%dd' % nd):
            g = rng.choice([1, 1, 2, 3])
            cpg = rng.randint(1, 3)
            cout = g * rng.randint(1, 3)
            B = rng.choice([0, 1, 2])
            S = [rng.randint(0, 7) for _ in range(nd)]
            K = [rng.randint(1, 4) for _ in range(nd)]
            x = maybe_nc(tg.randn(B, g * cpg, *S, dtype=dt()))
            if name == base:
                w = tg.randn(cout, cpg, *K, dtype=x.dtype)
            else:
                w = tg.randn(g * cpg, cout // g, *K, dtype=x.dtype)
            if rng.random() < 0.2:
                x = x.requires_grad_(True)
            if rng.random() < 0.2:
                w = w.requires_grad_(True)
            kw = dict(stride=tuple(small(1, 3) for _ in range(nd)) if rng.random() < 0.5 else small(1, 3),
                      dilation=small(1, 3), groups=g if rng.random() < 0.95 else rng.choice([0, -1, 4]))
            if name == base:
                kw['padding'] = small(0, 3) if rng.random() < 0.8 else rng.choice(['same', 'valid'])
            else:
                kw['padding'] = small(0, 3)
                kw['output_padding'] = small(0, 2)
            b = None if rng.random() < 0.4 else tg.randn(cout if rng.random() < 0.9 else cout + 1, dtype=x.dtype)
            return [x, w, b], kw
        if name in ('max_pool%dd' % nd, 'avg_pool%dd' % nd):
            B, C = rng.choice([0, 1, 2]), rng.randint(1, 3)
            S = [rng.randint(0, 9) for _ in range(nd)]
            x = maybe_nc(tg.randn(B, C, *S, dtype=dt()))
            if rng.random() < 0.15:
                x = x[0]  # unbatched
            if rng.random() < 0.25:
                x = x.requires_grad_(True)
            k = small(1, 4)
            kw = dict(stride=None if rng.random() < 0.3 else small(1, 3), padding=small(0, 2),
                      ceil_mode=rng.random() < 0.5)
            if name.startswith('max'):
                kw['dilation'] = small(1, 3)
                kw['return_indices'] = rng.random() < 0.5
            else:
                kw['count_include_pad'] = rng.random() < 0.5
                if nd > 1 and rng.random() < 0.3:
                    kw['divisor_override'] = small(-1, 3)
            return [x, k], kw
    if name in ('matmul', 'mm', 'bmm', 'addmm', 'linear'):
        m, k, n = rng.randint(0, 4), rng.randint(0, 4), rng.randint(0, 4)
        lead = [rng.randint(0, 3) for _ in range(rng.choice([0, 0, 1, 2]))]
        d = dt()
        a = maybe_nc(tg.randn(*lead, m, k, dtype=d))
        b = maybe_nc(tg.randn(*(lead[-1:] if rng.random() < 0.5 else lead), k, n, dtype=d))
        if name == 'addmm':
            return [tg.randn(rng.choice([(m, n), (n,), (1, n), ()]), dtype=d), tg.randn(m, k, dtype=d),
                    tg.randn(k, n, dtype=d)], dict(beta=rng.choice([0.0, 1.0, float('nan')]), alpha=2.0)
        if name == 'linear':
            return [a, tg.randn(n, k, dtype=d), None if rng.random() < 0.5 else tg.randn(n, dtype=d)], {}
        if rng.random() < 0.3:
            a = tg.randn(k, dtype=d)
        return [a, b], {}
    if name in ('batch_norm',):
        C = rng.randint(1, 4)
        x = maybe_nc(tg.randn(rng.choice([0, 1, 2, 3]), C, *[rng.randint(0, 3) for _ in range(rng.choice([0, 1, 2, 3]))]))
        return [x, tg.zeros(C), tg.ones(C), tg.ones(C) if rng.random() < 0.5 else None, None], \
            dict(training=rng.random() < 0.5, eps=rng.choice([1e-5, 0.0, -1.0]))
    if name == 'layer_norm':
        shape = [rng.randint(0, 4) for _ in range(rng.randint(1, 4))]
        x = maybe_nc(tg.randn(*shape))
        k = rng.randint(0, len(shape))
        ns = tuple(shape[len(shape) - k:])
        return [x, ns], dict(weight=tg.ones(ns) if rng.random() < 0.5 else None,
                              eps=rng.choice([1e-5, 0.0]))
    if name in ('cross_entropy', 'nll_loss'):
        N, C = rng.randint(0, 3), rng.randint(1, 4)
        extra = [rng.randint(0, 3) for _ in range(rng.choice([0, 0, 1, 2]))]
        x = tg.randn(N, C, *extra).requires_grad_(rng.random() < 0.5)
        t = tg.randint(-1, C + 1, (N, *extra)) if rng.random() < 0.3 else tg.randint(0, C, (N, *extra))
        if rng.random() < 0.2:
            t = tg.full((N, *extra), -100, dtype=tg.int64)
        kw = dict(reduction=rng.choice(['mean', 'sum', 'none']))
        if rng.random() < 0.3:
            kw['weight'] = tg.rand(C if rng.random() < 0.9 else C + 1)
        if rng.random() < 0.3:
            kw['ignore_index'] = rng.choice([-100, 0, 1, -1, 2**40])
        if name == 'cross_entropy' and rng.random() < 0.3:
            kw['label_smoothing'] = rng.choice([0.1, 1.0, 1.5, -0.1])
        return [x, t], kw
    if name in ('mse_loss', 'binary_cross_entropy_with_logits'):
        s = [rng.randint(0, 3) for _ in range(rng.randint(0, 3))]
        return [tg.randn(*s).requires_grad_(True), tg.rand(*s)], dict(reduction=rng.choice(['mean', 'sum', 'none']))
    if name in ('_scatter', 'gather', 'index_select', 'embedding'):
        s = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
        x = tg.randn(*s)
        d = rng.randint(-len(s), len(s) - 1)
        hi = s[d] + (1 if rng.random() < 0.2 else 0)
        lo = -1 if rng.random() < 0.1 else 0
        if name == 'index_select':
            return [x, d, tg.randint(lo, hi, (rng.randint(0, 5),))], {}
        if name == 'embedding':
            return [tg.randint(lo, s[0] + (1 if rng.random() < 0.2 else 0), tuple(rng.randint(0, 3) for _ in range(rng.randint(0, 2)))), x if x.ndim == 2 else tg.randn(s[0], 3)], {}
        idx = tg.randint(lo, hi, tuple(rng.randint(0, si) for si in s))
        if name == 'gather':
            return [x, d, idx], {}
        return [x.clone(), d, idx, tg.randn(*s)], {}
    if name == 'permute':
        x = tg.randn(*[2] * rng.randint(0, 4))
        p = list(range(x.ndim))
        rng.shuffle(p)
        if rng.random() < 0.3 and p:
            p[0] = rng.choice([p[-1], -1, x.ndim, -x.ndim - 1])
        return [x, tuple(p)], {}
    return None
