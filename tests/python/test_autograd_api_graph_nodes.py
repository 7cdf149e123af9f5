"""The recorded graph as PyTorch shows it, against PyTorch 1.13:
grad_fn.next_functions ((node, input_nr) pairs, None for inputs that need
no gradient, AccumulateGrad nodes for leaves with .variable the leaf),
name(), node identity (a.grad_fn.next_functions[0][0] is b.grad_fn),
nodes outliving their tensors, and node hooks (register_hook called with
(grad_inputs, grad_outputs), register_prehook with grad_outputs; in the
order registered; a tuple returned replaces the gradients; handles remove
them) with PyTorch's errors for bad results."""
import gc

import pytest

import tensorgraph as tg
from autograd_api_oracle import raises_same, same
from conftest import SANITIZED, needs_torch, torch

pytestmark = needs_torch


def describe(node, leaves, depth=6):
    """node's graph as nested tuples: (class name, name(), next) where next
    holds (description, input_nr) pairs; a leaf's AccumulateGrad is
    ('AccumulateGrad', name(), index of its variable in leaves)"""
    if node is None:
        return None
    if type(node).__name__ == 'AccumulateGrad':
        return ('AccumulateGrad', node.name(),
                next(i for i, t in enumerate(leaves) if t is node.variable))
    if depth == 0:
        return (type(node).__name__, node.name(), '...')
    return (type(node).__name__, node.name(),
            tuple((describe(n, leaves, depth - 1), nr) for n, nr in node.next_functions))


def same_graph(f):
    """f(T) -> (root tensor, leaves): the same graph with tensorgraph and torch"""
    (a, la), (b, lb) = f(tg), f(torch)
    da, db = describe(a.grad_fn, la), describe(b.grad_fn, lb)
    assert da == db, (da, db)
    return a, la


# ---- next_functions on several graphs ----------------------------------------------------
def test_add_mul_chain_and_no_grad_inputs():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        w = T.tensor([3., 4.])  # needs no grad: (None, 0)
        y = x * w
        z = (y + x).exp() * y
        return (z - w).sum(), [x, w]
    r, (x, w) = same_graph(f)
    s = r.grad_fn
    assert s.name() == 'SumBackward0' and len(s.next_functions) == 1
    sub = s.next_functions[0][0]
    assert sub.next_functions[1] == (None, 0)


def test_shared_nodes_are_the_same_objects():
    for T in (tg, torch):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        z = y.exp() + y
        add = z.grad_fn
        assert add.next_functions[1][0] is y.grad_fn
        assert add.next_functions[0][0].next_functions[0][0] is y.grad_fn
        assert y.grad_fn is y.grad_fn and y.grad_fn == y.grad_fn
        assert hash(y.grad_fn) == hash(add.next_functions[1][0])
        acc = y.grad_fn.next_functions[0][0]
        assert type(acc).__name__ == 'AccumulateGrad' and acc.variable is x
        assert acc.name() == 'torch::autograd::AccumulateGrad' and acc.next_functions == ()
        # one AccumulateGrad per leaf while it is held
        assert (x + 1).grad_fn.next_functions[0][0] is acc
        assert x.grad_fn is None


def test_leaf_order_and_constants():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        u = T.tensor([5., 6.], requires_grad=True)
        c = T.ones(2)
        return (c + x) * (u - c) + u * 3, [x, u, c]
    same_graph(f)


def test_views():
    def f(T):
        x = T.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
        b = x.t() * 2
        c = x.view(6)[2:4]
        d = x.transpose(0, 1).reshape(6)
        return b.sum() + c.sum() * d.sum() + x.unsqueeze(0).sum(), [x]
    same_graph(f)


def test_multi_output_ops():
    def f(T):
        x = T.tensor([[3., 1.], [2., 5.]], requires_grad=True)
        s = T.sort(x, 1).values
        k = T.topk(x, 1).values
        return (s * 2).sum() + k.sum(), [x]
    same_graph(f)


def test_unary_and_reductions():
    def f(T):
        x = T.tensor([0.5, 1.5], requires_grad=True)
        return (x.sin().tanh().sigmoid() + x / 2 - T.ones(2)).mean(), [x]
    same_graph(f)


def leaves_reached(node, seen=None):
    """the variables of the AccumulateGrad nodes node reaches, and how many nodes it passes"""
    seen = set() if seen is None else seen
    found = []
    for n, _ in node.next_functions:
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        found += [n.variable] if type(n).__name__ == 'AccumulateGrad' else leaves_reached(n, seen)
    return found


@pytest.mark.parametrize("op", ["select", "max_dim", "pow", "rsub", "split"])
def test_composed_ops_name_and_reach_as_torch(op):
    # tensorgraph composes these of several C ops, so its graph has more
    # nodes (docs/PYTHON.md); the node's name and the leaves it reaches are
    # PyTorch's
    make = {"select": lambda T, x: x[0], "max_dim": lambda T, x: x.max(1).values,
            "pow": lambda T, x: x.pow(2), "rsub": lambda T, x: 1 - x,
            "split": lambda T, x: x.split(1)[1]}[op]

    def f(T):
        x = T.tensor([[3., 1.], [2., 5.]], requires_grad=True)
        n = make(T, x).grad_fn
        return n.name(), [t is x for t in leaves_reached(n)]
    assert same(f)[1] == [True]


def test_custom_function():
    def f(T):
        class Scale(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, b):
                return a * k + b

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, g

        x = T.tensor([1., 2.], requires_grad=True)
        w = T.tensor([3., 4.])
        return Scale.apply(x, 2., x * w).sum(), [x, w]
    r, _ = same_graph(f)
    fn = r.grad_fn.next_functions[0][0]
    assert type(fn).__name__ == 'ScaleBackward' and fn.name() == 'ScaleBackward'


def test_node_outlives_its_tensor():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        n = (x * 2).exp().grad_fn  # the tensors are gone
        gc.collect()
        m = n.next_functions[0][0]
        del n
        gc.collect()
        acc = m.next_functions[0][0]
        return (type(m).__name__, m.name(), len(m.next_functions), acc.variable is x,
                m.next_functions[1])
    assert same(f) == ('MulBackward0', 'MulBackward0', 2, True, (None, 0))


def test_leaf_and_no_grad_have_no_node():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        with T.no_grad():
            y = x * 2
        return x.grad_fn is None, y.grad_fn is None, x.detach().grad_fn is None
    assert same(f) == (True, True, True)


# ---- node hooks ----------------------------------------------------------------------------
def test_hooks_see_what_torch_sees():
    def f(T):
        seen = []
        x = T.tensor([1., 2.], requires_grad=True)
        w = T.tensor([3., 4.])
        y = x * w
        n = y.grad_fn
        n.register_prehook(lambda go: seen.append(('pre1', go)))
        n.register_hook(lambda gi, go: seen.append(('post1', gi, go)))
        n.register_prehook(lambda go: seen.append(('pre2', go)))
        n.register_hook(lambda gi, go: seen.append(('post2', gi, go)))
        (y * 5).sum().backward()
        return seen, x.grad
    same(f)


def test_hooks_replace_gradients():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        u = T.tensor([3., 4.], requires_grad=True)
        y = x * u
        y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
        y.grad_fn.register_prehook(lambda go: None)  # keeps what the first gave
        y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, None))  # u gets nothing
        z = y.exp()
        z.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + go[0],))
        z.sum().backward()
        return x.grad, u.grad
    assert same(f)[1] is None


def test_hook_results_chain_and_remove():
    def f(T):
        calls = []
        x = T.tensor([1., 2.], requires_grad=True)
        y = x.exp()
        n = y.grad_fn
        h1 = n.register_hook(lambda gi, go: calls.append('a') or (gi[0] * 2,))
        n.register_hook(lambda gi, go: calls.append(('b', gi)) or None)
        h3 = n.register_prehook(lambda go: calls.append('c') or (go[0] * 3,))
        y.sum().backward(retain_graph=True)
        g1 = x.grad.clone()
        h1.remove()
        h3.remove()
        h1.remove()  # a second remove does nothing
        x.grad = None
        y.sum().backward()
        return calls, g1, x.grad
    same(f)


def test_hook_kept_by_the_graph_not_the_python_object():
    def f(T):
        calls = []
        x = T.tensor([1., 2.], requires_grad=True)
        z = (x * 2).exp()
        z.grad_fn.next_functions[0][0].register_hook(lambda gi, go: calls.append(gi))
        gc.collect()  # the Python node object is gone; the hook stays
        z.sum().backward()
        return calls
    same(f)


def test_hooks_in_autograd_grad_and_create_graph():
    def f(T):
        calls = []
        x = T.tensor([1., 2.], requires_grad=True)
        u = T.tensor([3.], requires_grad=True)
        a, b = x * x, u.exp()
        a.grad_fn.register_hook(lambda gi, go: calls.append('a') or (gi[0] * 2, gi[1]))
        b.grad_fn.register_hook(lambda gi, go: calls.append('b'))  # not on the way to x
        g, = T.autograd.grad((a.sum() + b.sum()), x, create_graph=True)
        gg, = T.autograd.grad(g.sum(), x)
        return calls, g, gg
    same(f)


def test_accumulate_grad_prehook():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 3
        acc = y.grad_fn.next_functions[0][0]
        seen = []
        acc.register_prehook(lambda go: seen.append(go) or (go[0] + 1,))
        y.sum().backward()
        return seen, x.grad
    same(f)


def test_accumulate_grad_post_hook_refused():
    x = tg.tensor([1., 2.], requires_grad=True)
    acc = (x * 2).grad_fn.next_functions[0][0]
    with pytest.raises(NotImplementedError, match="AccumulateGrad.register_hook"):
        acc.register_hook(lambda gi, go: None)


# ---- errors --------------------------------------------------------------------------------
def test_hook_returning_wrong_count():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 3  # two inputs: x and the number

        def hook(gi, go):
            return (gi[0],)
        y.grad_fn.register_hook(hook)
        y.sum().backward()
    raises_same(f, RuntimeError, "hook 'hook' has returned an incorrect number of values "
                "(got 1, but expected 2)")


@pytest.mark.parametrize("bad", [5, [None]])
def test_hook_returning_no_tuple(bad):
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x.exp()
        y.grad_fn.register_prehook(lambda go: bad)
        y.sum().backward()
    raises_same(f, TypeError, f"expected tuple, but hook returned '{type(bad).__name__}'")


def test_hook_returning_no_tensor():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x.exp()
        y.grad_fn.register_prehook(lambda go: (3,))
        y.sum().backward()
    raises_same(f, TypeError, "expected Variable, but hook returned 'int'")


@pytest.mark.parametrize("pre", [True, False])
def test_hook_changing_the_size(pre):
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x.exp()

        def resize(*grads):
            return (T.ones(3),)
        (y.grad_fn.register_prehook if pre else y.grad_fn.register_hook)(resize)
        y.sum().backward()
    raises_same(f, RuntimeError, "hook 'resize' has changed the size of value")


def test_hook_exception_propagates():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x.exp()

        def hook(go):
            raise ValueError("boom from the hook")
        y.grad_fn.register_prehook(hook)
        y.sum().backward()
    for T in (tg,) if SANITIZED else (tg, torch):  # torch's C++ errors abort under ASan
        with pytest.raises(ValueError, match="boom from the hook"):
            f(T)


def test_handles_are_checked():
    with pytest.raises(TypeError, match="node handle"):
        tg._C._grad_node_next(object())
    with pytest.raises(TypeError, match="node handle"):
        tg._C._grad_node_info(None)
    with pytest.raises(TypeError):
        tg._C._grad_node(3)
