"""The composed functions of _ops_cover, _ops_special and _linalg_lu trace
inside tg.function (no host reads, no detach of symbolic values): graph
results and gradients equal eager ones; the host-computed ones refuse
with a clear error."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import close

FNS = {
    'erfc': lambda x: tg.erfc(x), 'xlogy': lambda x: tg.xlogy(x, x + 2),
    'cummax': lambda x: tg.cummax(x, 0).values, 'cummin': lambda x: tg.cummin(x, 0).values,
    'logcumsumexp': lambda x: tg.logcumsumexp(x, 0), 'lgamma': lambda x: tg.lgamma(x),
    'digamma': lambda x: tg.digamma(x), 'erfinv': lambda x: tg.erfinv(x.tanh()),
    'det': lambda x: tg.det(x.reshape(2, 2)), 'inverse': lambda x: tg.inverse(x.reshape(2, 2)),
    'slogdet': lambda x: tg.slogdet(x.reshape(2, 2)).logabsdet,
    'solve': lambda x: tg.linalg.solve(x.reshape(2, 2), x[:2]),
    'sinc': lambda x: tg.sinc(x), 'fmax': lambda x: tg.fmax(x, x * 0),
    'copysign': lambda x: tg.copysign(x, -x), 'exp2': lambda x: tg.exp2(x),
}


@pytest.mark.parametrize("name", sorted(FNS))
def test_graph_equals_eager_values_and_gradients(name):
    f = FNS[name]
    data = [0.3, -0.7, 1.5, 2.2]
    xe = tg.tensor(data, dtype=tg.float64, requires_grad=True)
    xg = tg.tensor(data, dtype=tg.float64, requires_grad=True)
    ye, yg = f(xe), tg.function(f)(xg)
    close(yg, ye.detach().numpy(), 1e-12, 1e-12)
    ye.sum().backward()
    yg.sum().backward()
    close(xg.grad, xe.grad.numpy(), 1e-10, 1e-12)


def test_host_computed_ones_refuse_in_graphs():
    g = tg.function(lambda x: (x.to(tg.int64) & 3).to(tg.float32))
    with pytest.raises(RuntimeError, match="not available inside tg.function"):
        g(tg.tensor([1.0, 2.0]))
