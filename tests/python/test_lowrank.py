"""tg.svd_lowrank / tg.pca_lowrank (randomized, _lowrank.py), and
linalg.svd's singular vectors staying orthonormal for rank-deficient
matrices (which the low-rank factorizations meet)."""
import numpy as np
import pytest

import tensorgraph as tg


def _low_rank(rng, shape, r):
    return tg.tensor(rng.standard_normal(shape[:-1] + (r,)) @ rng.standard_normal((r, shape[-1])))


@pytest.mark.parametrize('shape,r', [((20, 6), 3), ((6, 20), 3), ((5, 5), 2), ((2, 8, 5), 1),
                                     ((4, 4), 4), ((3, 7), 0)])
def test_svd_vectors_orthonormal_when_rank_deficient(shape, r):
    A = _low_rank(np.random.default_rng(0), shape, r)
    U, S, Vh = tg.linalg.svd(A)
    m, n = shape[-2:]
    np.testing.assert_allclose((U.mT @ U).numpy(), np.broadcast_to(np.eye(m), U.shape),
                               atol=1e-13)
    np.testing.assert_allclose((Vh @ Vh.mT).numpy(), np.broadcast_to(np.eye(n), Vh.shape),
                               atol=1e-13)
    k = min(m, n)
    back = (U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :]
    np.testing.assert_allclose(back.numpy(), A.numpy(), atol=1e-12)


@pytest.mark.parametrize('m,n,r', [(20, 8, 3), (8, 20, 3), (30, 30, 5), (10, 4, 4)])
def test_svd_lowrank_reconstructs_a_low_rank_matrix(m, n, r):
    tg.manual_seed(0)
    A = _low_rank(np.random.default_rng(1), (m, n), r)
    q = min(6, m, n)
    U, S, V = tg.svd_lowrank(A, q=q)
    assert U.shape == (m, q) and S.shape == (q,) and V.shape == (n, q)
    np.testing.assert_allclose(((U * S) @ V.mT).numpy(), A.numpy(), atol=1e-11)
    np.testing.assert_allclose((U.mT @ U).numpy(), np.eye(q), atol=1e-12)
    want = np.linalg.svd(A.numpy(), compute_uv=False)[:q]
    np.testing.assert_allclose(S.numpy(), want, atol=1e-11)


def test_svd_lowrank_with_M_and_pca_centers():
    tg.manual_seed(1)
    rng = np.random.default_rng(2)
    A = _low_rank(rng, (12, 7), 2)
    M = tg.tensor(rng.standard_normal((1, 7)))
    U, S, V = tg.svd_lowrank(A + M, q=3, M=M)
    np.testing.assert_allclose(((U * S) @ V.mT).numpy(), A.numpy(), atol=1e-11)
    U, S, V = tg.pca_lowrank(A + M, q=3)
    C = A.numpy() - A.numpy().mean(0, keepdims=True)
    np.testing.assert_allclose(((U * S) @ V.mT).numpy(), C, atol=1e-11)
    for bad, words in ((dict(q=8), 'not greater than min'), (dict(q=-1), 'non-negative'),
                       (dict(niter=-1), 'niter')):
        with pytest.raises(ValueError, match=words):
            tg.pca_lowrank(A, **bad)


def test_svd_lowrank_is_differentiable_and_batched():
    tg.manual_seed(2)
    A = tg.tensor(np.random.default_rng(3).standard_normal((2, 9, 6)), requires_grad=True)
    U, S, V = tg.svd_lowrank(A, q=6, niter=4)
    S.sum().backward()
    # d(sum of all singular values)/dA = U V^T for a full-rank A
    Ue, Se, Vhe = np.linalg.svd(A.detach().numpy(), full_matrices=False)
    np.testing.assert_allclose(A.grad.numpy(), Ue @ Vhe, atol=1e-8)
