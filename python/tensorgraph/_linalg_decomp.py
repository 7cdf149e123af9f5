"""Matrix decompositions composed from tensor ops, batched over leading
dims, so that autograd differentiates through them as through any op:
cholesky (column by column), solve_triangular (substitution), qr
(Householder reflections with LAPACK's sign choices, so Q and R are the
ones PyTorch returns), eigh (Jacobi rotations, n/2 disjoint ones per
round applied as one orthogonal matrix) and, through eigh of the
symmetric [[0, A], [A^T, 0]] whose eigenvalues are +-sigma, svd, svdvals,
pinv and matrix_rank. Costs: cholesky, qr and the substitutions take n
steps of O(n^2) tensor work; eigh a few sweeps of n - 1 rounds, each three
n x n products: meant for the small matrices of a network (up to ~100),
not for numerical linear algebra at scale. Checks that read values (not
positive-definite, no convergence) run in eager mode only."""
from . import _C
from ._creation import arange, ones_like, tensor, zeros
from ._dtype_info import finfo
from ._grad_mode import no_grad
from ._linalg_lu import _check_square, _eye

Tensor = _C.Tensor


class LinAlgError(RuntimeError):
    """a matrix the decomposition cannot handle (torch.linalg.LinAlgError)"""


def _symmetric_from(A, upper):
    """the symmetric matrix A's lower (upper) triangle describes, whose
    gradient is nevertheless split evenly between A[i, j] and A[j, i], as
    PyTorch's symmetrized backward of cholesky and eigh gives"""
    tri = _C.triu(A) if upper else _C.tril(A)
    strict = _C.triu(A, 1) if upper else _C.tril(A, -1)
    read = tri + strict.transpose(-2, -1)
    if not _concrete(A):  # graphs have no detach: the triangle's own gradient
        return read
    half = (A + A.transpose(-2, -1)) * 0.5
    return half + (read - half).detach()


def _concrete(t):
    return not t.is_symbolic


# ---- cholesky ----------------------------------------------------------------------
def _cholesky_lower(S, name, check):
    """L with L L^T = S (symmetric); info: the first failing minor (0: none)"""
    n = S.shape[-1]
    rows = arange(n)
    L = zeros(*S.shape[:-1], 0, dtype=S.dtype)
    info = 0
    for j in range(n):
        c = S.narrow(-1, j, 1).squeeze(-1)                        # column j
        if j:
            c = c - _C.matmul(L, L.narrow(-2, j, 1).transpose(-2, -1)).squeeze(-1)
        d = c.narrow(-1, j, 1)                                    # [..., 1]
        if check and _concrete(d) and not info and bool((d <= 0).any() or (d != d).any()):
            info = j + 1
        safe = _C.where(d > 0, d, tensor(1.0, dtype=S.dtype))
        root = _C.sqrt(safe)
        col = _C.where(rows < j, tensor(0.0, dtype=S.dtype),
                       _C.where(rows == j, root, c / root))
        col = _C.where(d > 0, col, tensor(float('nan'), dtype=S.dtype))
        L = _C.cat([L, col.unsqueeze(-1)], -1)
    return L, info


def _not_pd(name, A, info):
    where = "" if A.ndim == 2 else "(Batch element 0): "
    return LinAlgError(f"{name}: {where}The factorization could not be completed because "
                        f"the input is not positive-definite (the leading minor of order "
                        f"{info} is not positive-definite).")


def cholesky(A, *, upper=False, out=None):
    """L (lower) with L L^H = A for symmetric positive-definite A (only
    its lower triangle is read; upper=True: U = L^T, the upper one)"""
    _check_square(A, 'linalg.cholesky')
    L, info = _cholesky_lower(_symmetric_from(A, False), 'linalg.cholesky', True)
    if info:
        raise _not_pd('linalg.cholesky', A, info)
    return L.transpose(-2, -1) if upper else L


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): info 0, or the order of the first minor that is not
    positive-definite (then L holds NaN from that column on)"""
    from collections import namedtuple
    _check_square(A, 'linalg.cholesky_ex')
    L, info = _cholesky_lower(_symmetric_from(A, False), 'linalg.cholesky_ex', True)
    if info and check_errors:
        raise _not_pd('linalg.cholesky_ex', A, info)
    res = namedtuple('cholesky_ex', ['L', 'info'])
    return res(L.transpose(-2, -1) if upper else L,
               zeros(*A.shape[:-2], dtype=_C.int32) + info)


# ---- triangular solves ---------------------------------------------------------------
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (left) or X A = B, A triangular (only that triangle
    read), by substitution row by row"""
    _check_square(A, 'linalg.solve_triangular')
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same "
                           f"dtype, but found A of type {A.dtype} and B of type {B.dtype} "
                           f"instead")
    if not left:  # X A = B  <=>  A^T X^T = B^T, the other triangle
        return solve_triangular(A.transpose(-2, -1), B.transpose(-2, -1), upper=not upper,
                                unitriangular=unitriangular).transpose(-2, -1)
    n = A.shape[-1]
    if B.ndim < 2 or B.shape[-2] != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation AX = B ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{tuple(B.shape[-2:])[0] if B.ndim >= 2 else B.shape[0]}x"
                           f"{B.shape[-1]})")
    import numpy as np
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2])))
    A = A.expand(*batch, n, n)
    B = B.expand(*batch, *B.shape[-2:])
    order = range(n - 1, -1, -1) if upper else range(n)
    X = [None] * n
    for i in order:
        r = B.narrow(-2, i, 1)
        done = [k for k in range(n) if X[k] is not None]
        for k in done:
            r = r - A.narrow(-2, i, 1).narrow(-1, k, 1) * X[k]
        X[i] = r if unitriangular else r / A.narrow(-2, i, 1).narrow(-1, i, 1)
    return _C.cat(X, -2)


# ---- qr ----------------------------------------------------------------------------------
def _householder(x):
    """LAPACK's reflector for column x [..., m]: (v, tau, beta) with
    (I - tau v v^T) x = beta e1, v[0] = 1, beta = -sign(x0) |x| (no
    reflection, tau 0, when x below its head is zero)"""
    alpha, tail = x.narrow(-1, 0, 1), x.narrow(-1, 1, x.shape[-1] - 1)
    tail2 = _C.sum(tail * tail, -1, True)
    skip = tail2 == 0
    norm = _C.sqrt(alpha * alpha + _C.where(skip, tensor(1.0, dtype=x.dtype), tail2))
    beta = _C.where(alpha >= 0, -norm, norm)
    one = tensor(1.0, dtype=x.dtype)
    tau = _C.where(skip, tensor(0.0, dtype=x.dtype), (beta - alpha) / beta)
    scale = _C.where(skip, one, one / (alpha - beta))
    v = _C.cat([ones_like(alpha), tail * scale], -1)
    return v, tau, _C.where(skip, alpha, beta)


def qr(A, mode='reduced', *, out=None):
    """(Q, R) with A = Q R, Q orthonormal columns, R upper triangular:
    mode 'reduced' (k = min(m, n) columns), 'complete' (Q m x m) or 'r'
    (Q empty)"""
    if mode not in ('reduced', 'complete', 'r'):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.qr: The input tensor A must have at least 2 dimensions.")
    from collections import namedtuple
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    R, Q = A, _eye(m, A).expand(*A.shape[:-2], m, m)
    for j in range(k):
        v, tau, beta = _householder(R.narrow(-2, j, m - j).narrow(-1, j, 1).squeeze(-1))
        vc = v.unsqueeze(-1)                                        # [..., m-j, 1]
        low = R.narrow(-2, j, m - j)
        low = low - tau.unsqueeze(-1) * vc * _C.matmul(vc.transpose(-2, -1), low)
        R = _C.cat([R.narrow(-2, 0, j), low], -2)
        right = Q.narrow(-1, j, m - j)
        right = right - _C.matmul(right, vc) * tau.unsqueeze(-1) * vc.transpose(-2, -1)
        Q = _C.cat([Q.narrow(-1, 0, j), right], -1)
    R = _C.triu(R)
    res = namedtuple('qr', ['Q', 'R'])
    if mode == 'complete':
        return res(Q, R)
    if mode == 'r':
        return res(zeros(0, dtype=A.dtype), R.narrow(-2, 0, k))
    return res(Q.narrow(-1, 0, k), R.narrow(-2, 0, k))


# ---- eigh ----------------------------------------------------------------------------
def _rounds(n):
    """the n - 1 rounds of a round robin over n (even) indices: each a
    list of n/2 disjoint pairs, every pair once over all rounds"""
    idx = list(range(n))
    out = []
    for _ in range(n - 1):
        out.append([(min(idx[i], idx[n - 1 - i]), max(idx[i], idx[n - 1 - i]))
                    for i in range(n // 2)])
        idx = [idx[0], idx[-1]] + idx[1:-1]
    return out


def _round_matrices(pairs, n, like):
    """for one round: P [n/2, n] (1 at p and q of pair i: spreads a pair's
    value to its two rows), the pattern D of the diagonal entries the pairs
    rotate, the pattern K (+1 at (p, q), -1 at (q, p)), and the gathers
    of app, aqq and apq from the flattened matrix"""
    import numpy as np
    P = np.zeros((len(pairs), n))
    D = np.zeros((n, n))
    K = np.zeros((n, n))
    for i, (p, q) in enumerate(pairs):
        P[i, p] = P[i, q] = 1
        D[p, p] = D[q, q] = 1
        K[p, q], K[q, p] = 1, -1
    keep = np.eye(n) - D  # indices no pair touches (none for even n)
    pi = tensor([p * n + p for p, _ in pairs])
    qi = tensor([q * n + q for _, q in pairs])
    pq = tensor([p * n + q for p, q in pairs])
    t = lambda a: tensor(a, dtype=like.dtype)  # noqa: E731
    return t(P), t(D), t(K), t(keep), pi, qi, pq


def _jacobi_round(S, V, mats):
    """one round's n/2 rotations, each zeroing its S[p, q]: S <- J^T S J,
    V <- V J (Numerical Recipes' angle: t = sgn(theta) / (|theta| +
    sqrt(theta^2 + 1)), theta = (aqq - app) / (2 apq))"""
    P, D, K, keep, pi, qi, pq = mats
    flat = S.reshape(*S.shape[:-2], -1)
    app, aqq, apq = (_C.index_select(flat, -1, i) for i in (pi, qi, pq))
    zero = apq == 0
    one = tensor(1.0, dtype=S.dtype)
    theta = (aqq - app) / (2 * _C.where(zero, one, apq))
    t = _C.where(theta >= 0, one, -one) / (theta.abs() + _C.sqrt(theta * theta + 1))
    # apq = 0: no rotation (t = 0), but t's slope there is not 0: t =
    # apq / (aqq - app) + O(apq^3) for distinct diagonal entries, so that
    # expression (0 here) keeps the first and second derivatives (an exact
    # zero off the diagonal, a zero row or a block-diagonal matrix, used
    # to give the eigenvectors no gradient across it). Equal entries:
    # degenerate, no slope defined; 0 kept
    gap = aqq - app
    flat_t = apq / _C.where(gap == 0, one, gap)
    t = _C.where(zero, _C.where(gap == 0, tensor(0.0, dtype=S.dtype), flat_t), t)
    c = 1 / _C.sqrt(t * t + 1)
    s = t * c
    c_rows = _C.matmul(c.unsqueeze(-2), P).transpose(-2, -1)      # [..., n, 1]
    s_rows = _C.matmul(s.unsqueeze(-2), P).transpose(-2, -1)
    J = D * c_rows + K * s_rows + keep
    S = _C.matmul(_C.matmul(J.transpose(-2, -1), S), J)
    return S, _C.matmul(V, J)


def _off(S):
    return _C.sum((S - S.diagonal(0, -2, -1).diag_embed()) ** 2, (-2, -1))


def _jacobi(S, name):
    """_jacobi64 in float64 whatever S's dtype (float32 rotations, applied
    by products sweep after sweep, lose several digits), results in S's"""
    w, V = _jacobi64(S.to(_C.float64), name)
    return w.to(S.dtype), V.to(S.dtype)


def _jacobi64(S, name, max_sweeps=30):
    """(eigenvalues, eigenvectors) of symmetric S, ascending: sweeps until
    the off-diagonal part is at rounding level, (n eps)^2 of the matrix's
    squared norm (a fixed 12 sweeps in graph mode: Jacobi converges
    quadratically, a handful usually suffice)"""
    n = S.shape[-1]
    m = n + (n % 2)  # an odd n gets a phantom index that pairs with a zero row
    if m != n:
        S = _C.cat([_C.cat([S, zeros(*S.shape[:-1], 1, dtype=S.dtype)], -1),
                    zeros(*S.shape[:-2], 1, m, dtype=S.dtype)], -2)
    V = _eye(m, S).expand(*S.shape[:-2], m, m)
    rounds = [_round_matrices(r, m, S) for r in _rounds(m)] if m > 1 else []
    if _concrete(S):
        scale = _C.sum(S * S, (-2, -1)).detach() * (m * finfo(_C.float64).eps) ** 2
    off = None
    for sweep in range(max_sweeps if rounds else 0):
        for mats in rounds:
            S, V = _jacobi_round(S, V, mats)
        if not _concrete(S):
            if sweep >= 11:
                break
            continue
        off = _off(S).detach()
        if bool((off <= scale).all()):
            break
    else:
        if off is not None and bool((off > scale * 1e6).any()):
            raise LinAlgError(f"{name}: The algorithm failed to converge because the input "
                              f"matrix is ill-conditioned or has too many repeated "
                              f"eigenvalues")
    w = S.diagonal(0, -2, -1)
    if m != n:  # drop the phantom: its row and column stayed zero
        w, V = w.narrow(-1, 0, n), V.narrow(-2, 0, n).narrow(-1, 0, n)
    order = w.argsort(-1)
    w = _C.gather(w, -1, order)
    V = _C.gather(V, -1, order.unsqueeze(-2).expand(*V.shape))
    return w, V


def eigh(A, UPLO='L', *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of the symmetric
    matrix A's UPLO triangle describes; each eigenvector's sign is
    arbitrary (LAPACK's differs too)"""
    from collections import namedtuple
    if UPLO not in ('L', 'U'):
        raise RuntimeError("Expected UPLO argument to be 'L' or 'U', but got " + str(UPLO))
    _check_square(A, 'linalg.eigh')
    w, V = _jacobi(_symmetric_from(A, UPLO == 'U'), 'linalg.eigh')
    return namedtuple('eigh', ['eigenvalues', 'eigenvectors'])(w, V)


def eigvalsh(A, UPLO='L', *, out=None):
    return eigh(A, UPLO).eigenvalues


# ---- svd -------------------------------------------------------------------------------
def _svd_parts(A, name):
    """(U [.., m, m], S [.., k] descending, V [.., n, n]) from the
    eigenvectors of [[0, A], [A^T, 0]]: (u, v) / sqrt(2) for +sigma, and
    (u, 0) or (0, v) for the zero eigenvalues beyond k"""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype}")
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    Z1, Z2 = zeros(*A.shape[:-2], m, m, dtype=A.dtype), zeros(*A.shape[:-2], n, n, dtype=A.dtype)
    H = _C.cat([_C.cat([Z1, A], -1), _C.cat([A.transpose(-2, -1), Z2], -1)], -2)
    w, X = _jacobi(H, name)
    # ascending: the k largest are +sigma (descending from the end); the
    # middle m + n - 2k (zero) ones complete the larger side's basis
    top = X.narrow(-1, m + n - k, k).flip(-1)
    S = w.narrow(-1, m + n - k, k).flip(-1)
    r2 = 2 ** 0.5
    U, V = top.narrow(-2, 0, m) * r2, top.narrow(-2, m, n) * r2
    extra = X.narrow(-1, k, m + n - 2 * k)
    if m > k:
        U = _C.cat([U, extra.narrow(-2, 0, m)], -1)
    if n > k:
        V = _C.cat([V, extra.narrow(-2, m, n)], -1)
    return _orthonormal(U), S, _orthonormal(V)


def _orthonormal(U):
    """U's columns made orthonormal where they are not: singular values of
    0 (a rank-deficient A) share the eigenvalue 0 with the completing
    vectors, so their eigenvectors need not split into (u, v) / sqrt 2
    halves. Householder QR keeps the orthonormal columns (signs restored
    from R's diagonal) and completes the others; values only, the
    gradient stays the decomposition's (undefined at repeated singular
    values anyway)"""
    n = U.shape[-1]
    if n == 0 or U.numel() == 0:
        return U
    if _concrete(U):  # eager: only where needed (a graph always takes the QR)
        err = (_C.matmul(U.transpose(-2, -1), U) - _eye(n, U)).abs().max().item()
        if not err > finfo(U.dtype).eps ** 0.5:  # NaN: left as it is
            return U
    Q, R = qr(U.detach())
    d = R.diagonal(0, -2, -1)
    sign = _C.where(d < 0, -ones_like(d), ones_like(d))
    return U + (Q * sign.unsqueeze(-2) - U).detach()


def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending; signs of singular
    vector pairs are arbitrary (LAPACK's differ too). Degenerate singular
    values give some orthonormal basis of their space."""
    from collections import namedtuple
    U, S, V = _svd_parts(A, 'linalg.svd')
    k = S.shape[-1]
    if not full_matrices:
        U, V = U.narrow(-1, 0, k), V.narrow(-1, 0, k)
    return namedtuple('svd', ['U', 'S', 'Vh'])(U, S, V.transpose(-2, -1))


def svdvals(A, *, driver=None, out=None):
    return _svd_parts(A, 'linalg.svdvals')[1]


def _tolerance(A, S, atol, rtol):
    """the singular values at or below which pinv and matrix_rank count
    zero: max(atol, rtol * S_max), PyTorch's defaults atol 0 and rtol
    eps * max(m, n)"""
    smax = S.narrow(-1, 0, 1) if S.shape[-1] else S
    if rtol is None:
        rtol = finfo(A.dtype).eps * max(A.shape[-2], A.shape[-1])
    tol = smax * rtol
    if atol is not None:
        tol = _C.maximum(tol, tensor(float(atol), dtype=A.dtype) + tol * 0)
    return tol


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """the Moore-Penrose inverse V diag(1/S) U^T, singular values at or
    below max(atol, rtol * S_max) treated as zero (PyTorch's defaults:
    atol 0, rtol eps * max(m, n))"""
    U, S, Vh = svd(A, full_matrices=False)
    keep = S > _tolerance(A, S, atol, rtol)
    inv_s = _C.where(keep, 1 / _C.where(keep, S, tensor(1.0, dtype=A.dtype)),
                     tensor(0.0, dtype=A.dtype))
    return _C.matmul(Vh.transpose(-2, -1) * inv_s.unsqueeze(-2), U.transpose(-2, -1))


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    S = svdvals(A)
    return _C.sum((S > _tolerance(A, S, atol, rtol)).to(_C.int64), -1)


# ---- the torch.* forms (and Tensor methods) ---------------------------------------
def legacy_cholesky(input, upper=False, *, out=None):
    """torch.cholesky (L, or U = L^T with upper=True)"""
    return cholesky(input, upper=upper)


def legacy_qr(input, some=True, *, out=None):
    """torch.qr: reduced (some=True) or complete"""
    return qr(input, 'reduced' if some else 'complete')


def legacy_svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: (U, S, V) with V, not V^T; compute_uv=False gives zero
    U and V of the full shapes, as PyTorch's"""
    from collections import namedtuple
    res = namedtuple('svd', ['U', 'S', 'V'])
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        return res(zeros(*batch, m, m, dtype=input.dtype), svdvals(input),
                   zeros(*batch, n, n, dtype=input.dtype))
    U, S, Vh = svd(input, full_matrices=not some)
    return res(U, S, Vh.transpose(-2, -1))


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """torch.triangular_solve: (X with op(A) X = input, a copy of A)"""
    from collections import namedtuple
    M = A.transpose(-2, -1) if transpose else A
    X = solve_triangular(M, input, upper=upper != transpose, unitriangular=unitriangular)
    return namedtuple('triangular_solve', ['solution', 'cloned_coefficient'])(X, A.clone())


def _factor_solve(L, B):
    """A^-1 B for A = L L^T by two triangular solves, which read only L's
    lower triangle"""
    Y = solve_triangular(L, B, upper=False)
    return solve_triangular(L.transpose(-2, -1), Y, upper=True)


def cholesky_solve(input, input2, upper=False, *, out=None):
    """X with A X = B given A's Cholesky factor (input2) and B (input).
    The values come from two triangular solves, which read the factor's
    triangle; the gradients are PyTorch's at every order: B's is A^-1 G,
    the factor's -(S X^T + X S^T) L with S = A^-1 G and L the factor as
    given, every entry of it (so not triangular, and the other triangle
    counts), S and X themselves differentiable in B and the factor: the
    derivatives of (L L^T)^-1 B, at A from L's triangle"""
    return _cholesky_solve(input, input2, upper)


def _cholesky_solve(input, input2, upper):
    L = input2.transpose(-2, -1) if upper else input2
    with no_grad():
        X = _factor_solve(L, input)
    if not (_C.is_grad_enabled() and (input.requires_grad or input2.requires_grad)):
        return X
    from ._linalg_lu import solve
    # M: the value A = tril(L) tril(L)^T, the derivatives of L L^T (every
    # entry of L) at all orders; X + (E - E0) keeps the triangular solves'
    # numbers (E - E0 is exactly 0) with E = M^-1 B's derivatives
    # (no detach(): this also traces inside tg.function)
    with no_grad():
        T = _C.tril(L)
        offset = _C.matmul(T, T.transpose(-2, -1)) - _C.matmul(L, L.transpose(-2, -1))
    M = _C.matmul(L, L.transpose(-2, -1)) + offset
    E = solve(M, input)
    with no_grad():
        E0 = solve(M, input)
    return X + (E - E0)


def cholesky_inverse(input, upper=False, *, out=None):
    """A^-1 from A's Cholesky factor"""
    if input.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    n = input.shape[-1]
    return _cholesky_solve(_eye(n, input).expand(*input.shape), input, upper)


def _take_out():
    from ._out_arg import takes_out
    g = globals()
    for name, torch_name in (('legacy_cholesky', 'cholesky'), ('cholesky_solve', 'cholesky_solve'),
                             ('cholesky_inverse', 'cholesky_inverse')):
        g[name] = takes_out(torch_name)(g[name])


_take_out()
