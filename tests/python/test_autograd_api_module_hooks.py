"""nn.Module's hooks as PyTorch 1.13's, compared with it:
register_full_backward_hook (grad_input / grad_output tuples, returned
replacements, arguments that do not require grad, several arguments and
outputs, containers, removal), the handles (ids, context managers) and
the forward hooks' replacements."""
from autograd_api_oracle import raises_same, same
from conftest import needs_torch

pytestmark = needs_torch


def _linear(T):
    m = T.nn.Linear(3, 2)
    with T.no_grad():
        m.weight.copy_(T.tensor([[1., 2., 3.], [4., 5., 6.]]))
        m.bias.fill_(0.5)
    return m


def test_full_backward_hook_sees_grads_and_is_removed():
    def f(T):
        m, seen = _linear(T), []
        h = m.register_full_backward_hook(lambda mod, gi, go: seen.append((mod is m, gi, go)))
        x = T.tensor([[1., 1., 1.]], requires_grad=True)
        (m(x) * T.tensor([[1., 2.]])).sum().backward()
        h.remove()
        m(x).sum().backward()
        return seen, x.grad, m.weight.grad
    same(f)


def test_full_backward_hook_replaces_grad_input():
    def f(T):
        m = _linear(T)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10,))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
        x = T.tensor([[1., 1., 1.]], requires_grad=True)
        m(x).sum().backward()
        return x.grad, m.weight.grad
    same(f)


def test_full_backward_hook_without_input_grad():
    def f(T):
        m, seen = _linear(T), []
        m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
        m(T.ones(1, 3)).sum().backward()
        return seen, m.bias.grad
    same(f)

    def replaces(T):
        m = _linear(T)
        m.register_full_backward_hook(lambda mod, gi, go: (T.ones(1, 3),))
        m(T.ones(1, 3)).sum().backward()
    raises_same(replaces, RuntimeError, "Backward hook for Modules where no input requires "
                "gradient should always return None or None for all gradients.")


def test_full_backward_hook_arguments_and_outputs():
    def f(T):
        class Mul(T.nn.Module):
            def forward(self, a, b, k):
                return a * b * k, a.sum(), 7
        m, seen = Mul(), []
        m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
        a = T.tensor([1., 2.], requires_grad=True)
        b = T.tensor([3., 4.])
        p, s, n = m(a, b, 2.)
        p.sum().backward()
        return seen, a.grad, n
    same(f)

    def wrong_count(T):
        m = _linear(T)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        m(T.ones(1, 3, requires_grad=True)).sum().backward()
    raises_same(wrong_count, RuntimeError, "Backward hook returned an invalid number of "
                "grad_input, got 2, but expected 1")


def test_full_backward_hooks_in_a_sequential():
    def f(T):
        net, seen = T.nn.Sequential(_linear(T), T.nn.ReLU()), []
        for name, mod in (('net', net), ('relu', net[1]), ('lin', net[0])):
            mod.register_full_backward_hook(
                lambda mod, gi, go, name=name: seen.append((name, gi, go)))
        x = T.tensor([[1., -1., 1.]], requires_grad=True)
        net(x).sum().backward()
        with T.no_grad():
            net(x)
        return seen, x.grad
    same(f)


def test_handles_and_forward_hooks():
    def f(T):
        m, seen = _linear(T), []
        with m.register_forward_hook(lambda mod, args, out: seen.append(out.shape) or out * 0):
            a = m(T.ones(1, 3))
        pre = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        b = m(T.ones(1, 3))
        pre.remove()
        h1 = m.register_forward_hook(lambda *a: None)
        h2 = m.register_forward_hook(lambda *a: None)
        return a, b, m(T.ones(1, 3)), seen, type(h1).__name__, h2.id > h1.id
    same(f)


def test_full_backward_pre_hook():
    """PyTorch 2's register_full_backward_pre_hook (1.13 has none: checked by hand)"""
    import tensorgraph as tg
    m, seen = _linear(tg), []
    h = m.register_full_backward_pre_hook(lambda mod, go: seen.append(go) or (go[0] * 3,))
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    x = tg.tensor([[1., 1., 1.]], requires_grad=True)
    m(x).sum().backward()
    assert seen[0][0].tolist() == [[1., 1.]]
    assert seen[1][0][0].tolist() == [[15., 21., 27.]] and seen[1][1][0].tolist() == [[3., 3.]]
    assert x.grad.tolist() == [[15., 21., 27.]] and m.bias.grad.tolist() == [3., 3.]
    h.remove()
    m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    try:
        m(x).sum().backward()
    except RuntimeError as e:
        assert "Backward pre hook returned an invalid number of grad_output, got 2, but " \
            "expected 1" in str(e)
    else:
        raise AssertionError("no error")
