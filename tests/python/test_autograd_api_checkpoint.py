"""tensorgraph.utils.checkpoint as torch.utils.checkpoint (1.13),
compared with it: gradients of the arguments and of the parameters the
function uses, several outputs, non-tensor arguments, keyword arguments
(refused by the reentrant form), the random state replayed for dropout,
checkpoint_sequential."""
import importlib

from autograd_api_oracle import raises_same, same
from conftest import needs_torch

pytestmark = needs_torch


def cp(T):
    return importlib.import_module(T.__name__ + '.utils.checkpoint')


def _linear(T, n_in, n_out, scale):
    m = T.nn.Linear(n_in, n_out)
    with T.no_grad():
        for p in m.parameters():
            p.copy_(T.linspace(-1, 1, p.numel()).reshape(p.shape) * scale)
    return m


def test_checkpoint_gradients():
    def f(T):
        m = _linear(T, 2, 2, 0.7)
        x = T.tensor([[1., -2.]], requires_grad=True)
        y = cp(T).checkpoint(lambda a: T.tanh(m(a)), x)
        (y * y).sum().backward()
        z = T.tensor([1., 2.], requires_grad=True)
        a, b = cp(T).checkpoint(lambda a, k: (a * k, a.sin()), z, 3.)
        (a.sum() + b.sum()).backward()
        w = T.tensor([1., 2.], requires_grad=True)
        c = cp(T).checkpoint(lambda a, k=1: a * k, w, use_reentrant=False, k=2)
        c.sum().backward()
        return y, x.grad, m.weight.grad, m.bias.grad, z.grad, w.grad
    same(f)


def test_checkpoint_replays_random_state():
    def f(T):
        T.manual_seed(3)
        x = T.ones(64, requires_grad=True)
        y = cp(T).checkpoint(lambda a: T.nn.functional.dropout(a * 2, 0.5), x)
        y.sum().backward()
        return bool((x.grad == (y.detach() != 0).float() * 4).all()), bool((y == 0).any())
    same(f)


def test_checkpoint_sequential():
    def f(T):
        net = T.nn.Sequential(_linear(T, 2, 3, 0.5), T.nn.Tanh(), _linear(T, 3, 3, 0.3),
                              T.nn.Tanh(), _linear(T, 3, 1, 0.9))
        x = T.tensor([[1., -2.]], requires_grad=True)
        y = cp(T).checkpoint_sequential(net, 2, x)
        y.sum().backward()
        return y, x.grad, [p.grad for p in net.parameters()]
    same(f)


def test_checkpoint_argument_checks():
    raises_same(lambda T: cp(T).checkpoint(lambda a, k=1: a * k, T.ones(2), k=2), ValueError,
                "Unexpected keyword arguments: k")

    def f(T):
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            y = cp(T).checkpoint(lambda a: a * 2, T.ones(2))
        return y.requires_grad, [str(m.message) for m in w]
    same(f)
