"""L-BFGS as PyTorch's torch.optim.LBFGS: one parameter group, a closure
that re-evaluates the loss, the two-loop recursion over the last
history_size (step, gradient change) pairs, a fixed step of lr (the first
scaled by 1 / |g|_1) or the strong-Wolfe line search (cubic
interpolation, then zoom), and PyTorch's stopping tests (gradient and
change tolerances, max_iter, max_eval). The parameters are handled as
one flat float vector."""
from collections import defaultdict

from .. import _C
from .._grad_mode import enable_grad, no_grad, zero_grads
from ._params import param_list


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """the minimiser of the cubic through (x1, f1, slope g1) and (x2, f2,
    g2), clamped to bounds (default [min(x1, x2), max(x1, x2)]); the
    bounds' middle when the cubic has no minimum"""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = disc ** 0.5
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _dot(a, b):
    return float(_C.sum(a * b))


class _Bracket:
    """two trial steps with their losses, gradients and slopes along d"""

    def __init__(self, pts):
        self.t, self.f, self.g, self.gtd = (list(v) for v in zip(*pts))

    def set(self, i, t, f, g, gtd):
        self.t[i], self.f[i], self.g[i], self.gtd[i] = t, f, g, gtd

    def order(self):
        """(low, high): the index of the lower loss first"""
        return (0, 1) if self.f[0] <= self.f[-1] else (1, 0)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """a step t along d meeting the strong Wolfe conditions (sufficient
    decrease c1, curvature c2): returns (loss, flat gradient, t, evaluations)"""
    d_norm = float(_C.amax(d.abs()))
    f_new, g_new = evaluate(t)
    evals, ls_iter = 1, 0
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    bracket, done = None, False
    while ls_iter < max_ls:
        too_far = f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev)
        if not too_far and abs(gtd_new) <= -c2 * gtd:
            return f_new, g_new, t, evals
        if too_far or gtd_new >= 0:
            bracket = _Bracket([(t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new, gtd_new)])
            break
        # extrapolate: a cubic step between 1.01 t - 0.01 t_prev and 10 t
        nxt = _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                         bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = nxt
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if bracket is None:  # max_ls reached while extrapolating
        bracket = _Bracket([(0.0, f, g, gtd), (t, f_new, g_new, gtd_new)])
    low, high = bracket.order()
    stuck = False
    while not done and ls_iter < max_ls:
        if abs(bracket.t[1] - bracket.t[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(bracket.t[0], bracket.f[0], bracket.gtd[0],
                       bracket.t[1], bracket.f[1], bracket.gtd[1])
        t, stuck = _keep_inside(t, bracket.t, stuck)
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket.f[low]:
            bracket.set(high, t, f_new, g_new, gtd_new)
            low, high = bracket.order()
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket.t[high] - bracket.t[low]) >= 0:
                bracket.set(high, bracket.t[low], bracket.f[low], bracket.g[low],
                            bracket.gtd[low])
            bracket.set(low, t, f_new, g_new, gtd_new)
    return bracket.f[low], bracket.g[low], bracket.t[low], evals


def _keep_inside(t, ts, stuck):
    """zoom's safeguard: a trial within 10% of the bracket's ends moves to
    that distance when the last one was already there (or outside)"""
    lo, hi = min(ts), max(ts)
    eps = 0.1 * (hi - lo)
    if min(hi - t, t - lo) >= eps:
        return t, False
    if stuck or t >= hi or t <= lo:
        return (hi - eps if abs(t - hi) < abs(t - lo) else lo + eps), False
    return t, True


def _direction(st, flat_grad, history_size):
    """-H g by the two-loop recursion (after storing the newest pair); st is
    the state dict, updated as PyTorch's ('al' appears on the second
    iteration). ys, ro, al and H_diag are Python floats (PyTorch's are 0-d
    tensors): float32 parameters then follow PyTorch's iterates closer
    than float32 sums of ours would"""
    if st['n_iter'] == 1:
        st['old_dirs'], st['old_stps'], st['ro'], st['H_diag'] = [], [], [], 1
        return -flat_grad
    old_dirs, old_stps, ro = st['old_dirs'], st['old_stps'], st['ro']
    y = flat_grad - st['prev_flat_grad']
    s = st['d'] * st['t']
    ys = _dot(y, s)
    if ys > 1e-10:  # keep the pair only with positive curvature
        if len(old_dirs) == history_size:
            old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
        old_dirs.append(y)
        old_stps.append(s)
        ro.append(1. / ys)
        st['H_diag'] = ys / _dot(y, y)
    if 'al' not in st:
        st['al'] = [None] * history_size
    al = st['al']
    q = -flat_grad
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = _dot(old_stps[i], q) * ro[i]
        q = q - old_dirs[i] * al[i]
    r = q * st['H_diag']
    for i in range(len(old_dirs)):
        be = _dot(old_dirs[i], r) * ro[i]
        r = r + old_stps[i] * (al[i] - be)
    return r


class LBFGS:
    """torch.optim.LBFGS(params, lr=1, max_iter=20, max_eval=None,
    tolerance_grad=1e-7, tolerance_change=1e-9, history_size=100,
    line_search_fn=None | 'strong_wolfe'); step(closure) is required.
    state[first parameter] holds PyTorch's entries under its names, added
    as PyTorch adds them (func_evals, n_iter, then al, d, t, old_dirs,
    old_stps, ro, H_diag, prev_flat_grad, prev_loss)"""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        params = param_list(params)
        if isinstance(params[0], dict):
            if len(params) != 1:
                raise ValueError("LBFGS doesn't support per-parameter options (parameter "
                                 "groups)")
            params = list(params[0]['params'])
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn not in (None, 'strong_wolfe'):
            raise RuntimeError("only 'strong_wolfe' is supported")
        self.defaults = dict(lr=lr, max_iter=max_iter,
                             max_eval=max_eval if max_eval is not None else max_iter * 5 // 4,
                             tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                             history_size=history_size, line_search_fn=line_search_fn)
        self.param_groups = [dict(self.defaults, params=params)]
        self._params = params
        self.state = defaultdict(dict)

    def zero_grad(self, set_to_none=False):
        zero_grads(self._params, set_to_none)

    def _flat_grad(self):
        parts = [(p.grad if p.grad is not None else p.detach() * 0).reshape(-1)
                 for p in self._params]
        return _C.cat(parts, 0)

    def _add(self, t, d):
        """params += t * d (d flat)"""
        with no_grad():
            at = 0
            for p in self._params:
                n = p.numel()
                p.copy_(p + (d[at:at + n] * t).reshape(tuple(p.shape)).to(p.dtype))
                at += n

    def _evaluate(self, closure):
        with enable_grad():
            return float(closure())

    def _line_search(self, closure, st, loss, flat_grad, gtd, tol_change):
        """the strong-Wolfe step from the current parameters along st['d']:
        (loss, flat gradient, step, evaluations), the parameters moved"""
        start = [p.detach().clone() for p in self._params]

        def at_step(t):
            for p, x in zip(self._params, start):
                p.copy_(x)
            self._add(t, st['d'])
            return self._evaluate(closure), self._flat_grad()
        loss, flat_grad, t, evals = _strong_wolfe(at_step, st['t'], st['d'], loss,
                                                  flat_grad, gtd, tolerance_change=tol_change)
        for p, x in zip(self._params, start):
            p.copy_(x)
        self._add(t, st['d'])
        return loss, flat_grad, t, evals

    def step(self, closure):
        """runs up to max_iter L-BFGS iterations; returns the first loss"""
        g = self.param_groups[0]
        lr, tol_grad, tol_change = g['lr'], g['tolerance_grad'], g['tolerance_change']
        st = self.state[self._params[0]]
        st.setdefault('func_evals', 0)
        st.setdefault('n_iter', 0)
        with no_grad():
            with enable_grad():
                orig_loss = closure()
            loss = float(orig_loss)
            evals = 1
            st['func_evals'] += 1
            flat_grad = self._flat_grad()
            if float(_C.amax(flat_grad.abs())) <= tol_grad:
                return orig_loss
            step = dict(st)  # d, t, ... as the last step left them, stored back at the end
            n_iter = 0
            while n_iter < g['max_iter']:
                n_iter += 1
                st['n_iter'] += 1
                step['n_iter'] = st['n_iter']
                step['d'] = _direction(step, flat_grad, g['history_size'])
                step['prev_flat_grad'] = flat_grad.clone()
                step['prev_loss'] = loss
                if st['n_iter'] == 1:  # PyTorch: min(1., 1. / |g|_1) * lr
                    step['t'] = min(1., 1. / float(_C.sum(flat_grad.abs()))) * lr
                else:
                    step['t'] = lr
                gtd = _dot(flat_grad, step['d'])
                if gtd > -tol_change:  # not a descent direction
                    break
                ls_evals = 0
                if g['line_search_fn'] == 'strong_wolfe':
                    loss, flat_grad, step['t'], ls_evals = self._line_search(
                        closure, step, loss, flat_grad, gtd, tol_change)
                else:
                    self._add(step['t'], step['d'])
                    if n_iter != g['max_iter']:
                        loss = self._evaluate(closure)
                        flat_grad = self._flat_grad()
                        ls_evals = 1
                evals += ls_evals
                st['func_evals'] += ls_evals
                if n_iter == g['max_iter'] or evals >= g['max_eval']:
                    break
                if float(_C.amax(flat_grad.abs())) <= tol_grad:
                    break
                if float(_C.amax((step['d'] * step['t']).abs())) <= tol_change or \
                        abs(loss - step['prev_loss']) < tol_change:
                    break
            if 'al' in step:
                st['al'] = step['al']
            for k in ('d', 't', 'old_dirs', 'old_stps', 'ro', 'H_diag', 'prev_flat_grad',
                      'prev_loss'):
                st[k] = step[k]
        return orig_loss

    def state_dict(self):
        """PyTorch's layout: the state under the first parameter's index"""
        state = {0: self.state[self._params[0]]} if self._params[0] in self.state else {}
        return {'state': state,
                'param_groups': [dict(self.defaults, params=list(range(len(self._params))))]}

    def load_state_dict(self, state_dict):
        self.state = defaultdict(dict)
        saved = state_dict['state'].get(0)
        if saved is not None:
            self.state[self._params[0]] = {k: list(v) if isinstance(v, list) else v
                                           for k, v in saved.items()}
        group = dict(state_dict['param_groups'][0])
        group.pop('params', None)
        self.defaults.update(group)
        self.param_groups[0].update(group)
