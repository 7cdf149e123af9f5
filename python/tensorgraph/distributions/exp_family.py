"""ExponentialFamily: the base of the distributions whose density is
h(x) exp(<theta, t(x)> - A(theta)). A subclass gives its natural
parameters theta (_natural_params), the log normalizer A
(_log_normalizer(*theta)) and E[log h(x)] (_mean_carrier_measure); the
entropy then follows from A and its gradient, as does the KL between two
members of one family (the Bregman divergence of A, kl_extra.py)."""
import tensorgraph as tg

from .distribution import Distribution
from .utils import sum_rightmost

__all__ = ['ExponentialFamily']


def _log_normalizer_and_gradients(dist):
    """A(theta) at dist's natural parameters, and dA/dtheta (with graphs,
    so the results stay differentiable), with theta detached"""
    nparams = [p.detach().requires_grad_() for p in dist._natural_params]
    with tg.enable_grad():
        lg_normal = dist._log_normalizer(*nparams)
        gradients = tg.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
    return nparams, lg_normal, gradients


class ExponentialFamily(Distribution):

    @property
    def _natural_params(self):
        """the tuple theta of natural parameters"""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = A(theta) - <theta, dA/dtheta> - E[log h(x)]"""
        result = -self._mean_carrier_measure
        nparams, lg_normal, gradients = _log_normalizer_and_gradients(self)
        result = result + lg_normal
        for theta, g in zip(nparams, gradients):
            result = result - (theta * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result

    def _bregman_kl(self, q):
        """KL(self || q) for q of the same family: A(q) - A(p) - <q - p, dA(p)>"""
        nparams, lg_normal, gradients = _log_normalizer_and_gradients(self)
        q_nparams = q._natural_params
        result = q._log_normalizer(*q_nparams) - lg_normal
        for p_theta, q_theta, g in zip(nparams, q_nparams, gradients):
            result = result - sum_rightmost((q_theta - p_theta) * g, len(q.event_shape))
        return result
