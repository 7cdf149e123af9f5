"""linalg's decompositions (_linalg_decomp.py): cholesky, solve_triangular,
qr, eigh, svd, pinv, matrix_rank and the torch.* forms, against PyTorch
(values, gradients, errors; eigenvectors and singular vectors up to
sign) when it is installed, and on their own: reconstruction,
orthonormality, finite-difference gradients, graph mode = eager."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, needs_torch, torch

RS = np.random.RandomState(7)
SQ = RS.randn(5, 5)
SPD = SQ @ SQ.T + 5 * np.eye(5)
SYM = SQ + SQ.T
SHAPES = [(5, 3), (3, 5), (4, 4), (2, 3, 3)]
MATS = {s: RS.randn(*s) for s in SHAPES}
WEIGHTS = {s: RS.randn(*s) for s in SHAPES + [(5, 5), (5,), (3,)]}


def _f64(L, a, grad=False):
    return L.tensor(a, dtype=L.float64, requires_grad=grad)


def _np(t):
    return np.array(t.detach().tolist())


def _run(L, fn, a):
    """(outputs, gradient of a fixed random weighting of them)"""
    x = _f64(L, a, True)
    outs = fn(L, x)
    outs = outs if isinstance(outs, tuple) else (outs,)
    loss = 0
    for o in outs:
        if o.numel():
            w = WEIGHTS.get(tuple(o.shape), np.ones(tuple(o.shape)))
            loss = loss + (o * L.tensor(np.resize(w, tuple(o.shape)), dtype=L.float64)).sum()
    loss.backward()
    return [_np(o) for o in outs], _np(x.grad)


CASES = [
    ('cholesky', lambda L, x: L.linalg.cholesky(x), SPD),
    ('cholesky upper', lambda L, x: L.linalg.cholesky(x, upper=True), SPD),
    ('qr reduced tall', lambda L, x: tuple(L.linalg.qr(x)), MATS[(5, 3)]),
    ('qr reduced wide', lambda L, x: tuple(L.linalg.qr(x)), MATS[(3, 5)]),
    ('qr complete square', lambda L, x: tuple(L.linalg.qr(x, mode='complete')), MATS[(4, 4)]),
    ('qr batched', lambda L, x: tuple(L.linalg.qr(x)), MATS[(2, 3, 3)]),
    ('eigvalsh', lambda L, x: L.linalg.eigvalsh(x), SYM),
    ('eigvalsh U', lambda L, x: L.linalg.eigvalsh(x, UPLO='U'), SQ),
    ('eigh vectors^2', lambda L, x: L.linalg.eigh(x).eigenvectors ** 2, SYM),
    ('svdvals tall', lambda L, x: L.linalg.svdvals(x), MATS[(5, 3)]),
    ('svdvals wide', lambda L, x: L.linalg.svdvals(x), MATS[(3, 5)]),
    ('svd |U| S |Vh|', lambda L, x: tuple(t.abs() if t.ndim == 2 else t
                                          for t in L.linalg.svd(x, full_matrices=False)),
     MATS[(4, 4)]),
    ('pinv', lambda L, x: L.linalg.pinv(x), MATS[(5, 3)]),
    ('solve_triangular lower', lambda L, x: L.linalg.solve_triangular(
        x, L.tensor(MATS[(5, 3)], dtype=L.float64), upper=False), SPD),
    ('solve_triangular right unit', lambda L, x: L.linalg.solve_triangular(
        x, L.tensor(MATS[(3, 5)], dtype=L.float64), upper=True, left=False,
        unitriangular=True), SPD),
]


@needs_torch
@pytest.mark.parametrize('name,fn,a', CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(name, fn, a):
    got, got_grad = _run(tg, fn, a)
    want, want_grad = _run(torch, fn, a)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6, atol=1e-8)


@needs_torch
@pytest.mark.parametrize('upper', [False, True])
def test_cholesky_solve_and_inverse_gradients_as_torch(upper):
    """PyTorch's gradients treat the factor as a full matrix: the factor's
    gradient is not triangular"""
    factor = np.linalg.cholesky(SPD)
    factor = factor.T.copy() if upper else factor
    b, g = MATS[(5, 3)], WEIGHTS[(5, 5)]

    def run(L):
        f, rhs = _f64(L, factor, True), _f64(L, b, True)
        x, inv = L.cholesky_solve(rhs, f, upper=upper), L.cholesky_inverse(f, upper=upper)
        ((x * _f64(L, WEIGHTS[(5, 3)])).sum() + (inv * _f64(L, g)).sum()).backward()
        return [_np(x), _np(inv), _np(f.grad), _np(rhs.grad)]
    for got, want in zip(run(tg), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@needs_torch
def test_torch_forms_and_methods_match_torch():
    def run(L):
        A, S = _f64(L, MATS[(5, 3)]), _f64(L, SPD)
        Lc = L.cholesky(S)
        b = _f64(L, MATS[(5, 3)])
        out = [L.cholesky(S, upper=True), S.cholesky(), *L.qr(A), *L.qr(A, some=False), *A.qr(),
               L.svd(A)[1], L.svd(A, compute_uv=False)[0], L.pinverse(A), A.pinverse(),
               L.triangular_solve(b, Lc, upper=False)[0],
               L.triangular_solve(b, Lc.t(), transpose=True)[0],
               L.cholesky_solve(b, Lc), L.cholesky_solve(b, Lc.t(), upper=True),
               L.cholesky_inverse(Lc), L.linalg.matrix_rank(A),
               L.linalg.matrix_rank(_f64(L, np.outer([1., 2, 3], [1., 1, 2])))]
        U, s, V = L.svd(A)
        out.append(U @ L.diag(s) @ V.t())
        return [_np(t) for t in out]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # torch's deprecation notes
        want = run(torch)
    for g, w in zip(run(tg), want):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)


@needs_torch
def test_not_positive_definite_errors_as_torch():
    bad = [[1., 2.], [2., 1.]]
    # PyTorch's error paths abort under the sanitizers' preloaded runtime
    for L in (tg,) if SANITIZED else (tg, torch):
        with pytest.raises(RuntimeError, match='leading minor of order 2 is not positive-'):
            L.linalg.cholesky(L.tensor(bad))
        with pytest.raises(RuntimeError, match=r'\(Batch element 0\)'):
            L.linalg.cholesky(L.tensor([bad]))
        L_, info = L.linalg.cholesky_ex(L.tensor(bad))
        assert int(info) == 2
    assert issubclass(tg.linalg.LinAlgError, RuntimeError)


def test_decompositions_reconstruct_without_torch():
    for shape in SHAPES:
        A = _f64(tg, MATS[shape])
        Q, R = tg.linalg.qr(A)
        np.testing.assert_allclose(_np(Q @ R), MATS[shape], atol=1e-12)
        np.testing.assert_allclose(_np(R), np.triu(_np(R)), atol=0)
        k = min(shape[-2:])
        np.testing.assert_allclose(_np(Q.transpose(-2, -1) @ Q), np.broadcast_to(np.eye(k), Q.shape[:-2] + (k, k)), atol=1e-12)
        U, S, Vh = tg.linalg.svd(A)
        m, n = shape[-2:]
        Sm = np.zeros(shape)
        idx = np.arange(k)
        Sm[..., idx, idx] = _np(S)
        np.testing.assert_allclose(_np(U) @ Sm @ _np(Vh), MATS[shape], atol=1e-11)
        np.testing.assert_allclose(_np(U.transpose(-2, -1) @ U), np.broadcast_to(np.eye(m), U.shape), atol=1e-11)
        np.testing.assert_allclose(_np(Vh @ Vh.transpose(-2, -1)), np.broadcast_to(np.eye(n), Vh.shape), atol=1e-11)
        assert (np.diff(_np(S), axis=-1) <= 0).all()
    w, V = tg.linalg.eigh(_f64(tg, SYM))
    np.testing.assert_allclose(_np(V) @ np.diag(_np(w)) @ _np(V).T, SYM, atol=1e-11)
    assert (np.diff(_np(w)) >= 0).all()
    Lc = tg.linalg.cholesky(_f64(tg, SPD))
    np.testing.assert_allclose(_np(Lc @ Lc.t()), SPD, atol=1e-11)
    # odd and tiny sizes, float32 computed in float64 inside
    for n in (0, 1, 3):
        a = RS.randn(n, n).astype(np.float32)
        a = a + a.T
        w32 = tg.linalg.eigvalsh(tg.tensor(a))
        assert w32.dtype == tg.float32
        np.testing.assert_allclose(np.sort(_np(w32)), np.sort(np.linalg.eigvalsh(a)) if n else [],
                                   rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('fn', [
    lambda x: tg.linalg.cholesky(x @ x.t() + 3 * tg.eye(3, dtype=tg.float64)),
    lambda x: tg.linalg.qr(x).R,
    lambda x: tg.linalg.eigvalsh(x + x.t()),
    lambda x: tg.linalg.svdvals(x),
    lambda x: tg.linalg.pinv(x),
])
def test_gradients_against_finite_differences(fn):
    x = _f64(tg, RS.randn(3, 3), True)
    assert tg.autograd.gradcheck(fn, (x,), eps=1e-6, atol=1e-6, rtol=1e-5)


def test_graph_mode_matches_eager():
    A = _f64(tg, MATS[(2, 3, 3)])
    S = A @ A.transpose(-2, -1) + tg.eye(3, dtype=tg.float64)
    for fn in (lambda a: tg.linalg.eigvalsh(a), lambda a: tg.linalg.qr(a).R,
               lambda a: tg.linalg.cholesky(a), lambda a: tg.linalg.svdvals(a)):
        np.testing.assert_allclose(_np(tg.function(fn)(S)), _np(fn(S)), atol=1e-12)


def test_bad_arguments():
    with pytest.raises(RuntimeError, match='square'):
        tg.linalg.cholesky(tg.ones(2, 3))
    with pytest.raises(RuntimeError, match='at least 2 dimensions'):
        tg.linalg.qr(tg.ones(3))
    with pytest.raises(RuntimeError, match='unrecognized mode'):
        tg.linalg.qr(tg.ones(3, 3), mode='full')
    with pytest.raises(RuntimeError, match="UPLO"):
        tg.linalg.eigh(tg.ones(3, 3), UPLO='X')
    with pytest.raises(RuntimeError, match='same dtype'):
        tg.linalg.solve_triangular(tg.eye(2), tg.ones(2, 2, dtype=tg.float64), upper=True)
    with pytest.raises(RuntimeError, match='Incompatible shapes'):
        tg.linalg.solve_triangular(tg.eye(2), tg.ones(3, 2), upper=True)
    with pytest.raises(RuntimeError, match='floating point'):
        tg.linalg.svd(tg.ones(2, 2, dtype=tg.int64))


@needs_torch
def test_norms_of_singular_values_and_cond_match_torch():
    a = RS.randn(2, 3, 4)

    def run(L):
        out = []
        for o in ('nuc', 2, -2):
            for dim, kd in (((-2, -1), False), ((0, 2), True), ((2, 1), False)):
                x = _f64(L, a, True)
                r = L.linalg.matrix_norm(x, ord=o, dim=dim, keepdim=kd)
                r.sum().backward()
                out += [_np(r), _np(x.grad)]
        sq = _f64(L, a[:, :3, :3])
        out += [_np(L.linalg.cond(sq, p)) for p in (None, 2, -2, 'fro', 'nuc', 1, -1, np.inf)]
        out.append(_np(L.linalg.norm(_f64(L, a[0]), 'nuc')))
        return out
    for g, w in zip(run(tg), run(torch)):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
