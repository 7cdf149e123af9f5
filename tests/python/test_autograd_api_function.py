"""tg.autograd.Function as torch.autograd.Function, compared with PyTorch:
several outputs (one gradient each in backward, zeros or None for unused
ones per set_materialize_grads), non-tensor arguments and outputs,
needs_input_grad, mark_non_differentiable on one of several outputs,
once_differentiable, double backward, and backward's result checks."""
import pytest

from autograd_api_oracle import raises_same, same
from conftest import needs_torch

pytestmark = needs_torch


def _two(T, materialize=True, seen=None):
    class Two(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            ctx.set_materialize_grads(materialize)
            return x * k, x.exp()

        @staticmethod
        def backward(ctx, g1, g2):
            if seen is not None:
                seen.append((g1, g2))
            x, = ctx.saved_tensors
            r = T.zeros_like(x)
            if g1 is not None:
                r = r + g1 * ctx.k
            if g2 is not None:
                r = r + g2 * x.exp()
            return r, None
    return Two


def test_two_outputs():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        a, b = _two(T).apply(x, 3.)
        (a.sum() + (b * b).sum()).backward()
        return x.grad, a, b, type(a.grad_fn).__name__, type(b.grad_fn).__name__, a.is_leaf
    same(f)


@pytest.mark.parametrize('materialize', [True, False])
@pytest.mark.parametrize('used', [0, 1])
def test_unused_output_grad(materialize, used):
    def f(T):
        seen = []
        x = T.tensor([1., 2.], requires_grad=True)
        out = _two(T, materialize, seen).apply(x, 3.)
        out[used].sum().backward()
        return x.grad, seen
    same(f)


def _none_back(T):
    class NoneBack(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return None
    return NoneBack


def test_none_from_backward_reaches_no_leaf():
    """None from a backward is PyTorch's undefined gradient: the built-in
    nodes below it give none either, so a leaf reached only through it
    keeps grad None (not zeros), autograd.grad gives None with
    allow_unused and refuses without; other paths still count"""
    def f(T):
        F = _none_back(T)
        x = T.tensor([1., 2.], requires_grad=True)
        F.apply(x * 2 + 1).sum().backward()
        y = T.tensor([1., 2.], requires_grad=True)
        (F.apply(y * 2) + y).sum().backward()
        z = T.tensor([3., 1., 2.], requires_grad=True)
        v, _ = z.sort()
        (F.apply(v).sum() + v[0]).backward()
        w = T.tensor([1., 2.], requires_grad=True)
        g, = T.autograd.grad(F.apply(w.exp()).sum(), w, allow_unused=True)
        return x.grad, y.grad, z.grad, g
    same(f)

    def refused(T):
        w = T.tensor([1., 2.], requires_grad=True)
        T.autograd.grad(_none_back(T).apply(w.exp()).sum(), w)
    raises_same(refused, RuntimeError, 'appears to not have been used in the graph')


def test_retained_graph_reaches_outputs_afresh():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        seen = []
        a, b = _two(T, False, seen).apply(x, 3.)
        g1, = T.autograd.grad(a.sum(), x, retain_graph=True)
        g2, = T.autograd.grad(b.sum(), x, retain_graph=True)
        g3, = T.autograd.grad((a + b).sum(), x)
        return g1, g2, g3, seen
    same(f)


def test_double_backward_through_two_outputs():
    def f(T):
        class P(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2, x ** 3

            @staticmethod
            def backward(ctx, a, b):
                x, = ctx.saved_tensors
                return 2 * x * a + 3 * x ** 2 * b
        x = T.tensor([1., 2.], requires_grad=True)
        a, b = P.apply(x)
        g, = T.autograd.grad((a + b).sum(), x, create_graph=True)
        g2, = T.autograd.grad(g.sum(), x)
        return g, g2
    same(f)


def test_mark_non_differentiable_one_of_two():
    def f(T):
        seen = []

        class Sort(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                v, i = x.sort()
                ctx.mark_non_differentiable(i)
                ctx.save_for_backward(i)
                return v, i

            @staticmethod
            def backward(ctx, gv, gi):
                seen.append(gi)
                i, = ctx.saved_tensors
                g = T.zeros_like(gv)
                g[i] = gv
                return g
        x = T.tensor([3., 1., 2.], requires_grad=True)
        v, i = Sort.apply(x)
        (v * T.tensor([1., 2., 3.])).sum().backward()
        return x.grad, v, i, seen, i.grad_fn is None
    same(f)


def test_non_tensor_inputs_and_outputs():
    def f(T):
        got = []

        class P(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, n):
                got.append(ctx.needs_input_grad)
                return x * y * n, n + 1, x.long()

            @staticmethod
            def backward(ctx, g, gn, gl):
                got.append((ctx.needs_input_grad, gn, gl))
                return g * 2, None, None
        x = T.tensor([1., 2.], requires_grad=True)
        a, m, xl = P.apply(x, T.ones(2), 2)
        a.sum().backward()
        return x.grad, m, xl, got
    same(f)


def test_tuple_of_one_and_mixed_dtypes():
    def f(T):
        class One(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return (x * 2,)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Mixed(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x.double() * 3, x.sum()

            @staticmethod
            def backward(ctx, a, b, s):
                return a * 2 + (b * 3).float() + s
        x = T.tensor([1., 2.], requires_grad=True)
        r = One.apply(x)
        a, b, s = Mixed.apply(x)
        (r[0].sum() + a.sum() + b.sum() + s).backward()
        return type(r).__name__, x.grad, str(a.dtype)[-7:], str(b.dtype)[-7:], s.shape
    same(f)


def test_outputs_written_in_place_and_nested_functions():
    def f(T):
        class In(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, a, b):
                return a * 2 + b * 3

        class Out(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                a, b = In.apply(x)
                return a + b, a - b

            @staticmethod
            def backward(ctx, a, b):
                return a * 5 - b
        x = T.tensor([1., 2.], requires_grad=True)
        a, b = Out.apply(x)
        c, d = In.apply(x)
        c.mul_(5)
        (a + b + c + d).sum().backward()
        return x.grad, a, b, c
    same(f)


def test_no_grad_apply():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        with T.no_grad():
            a, b = _two(T).apply(x, 2.)
        return a.requires_grad, a.grad_fn is None, b
    same(f)


def _square(T, decorate):
    class Sq(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @decorate
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    return Sq


def test_once_differentiable():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        sq = _square(T, T.autograd.function.once_differentiable)
        g, = T.autograd.grad(sq.apply(x).sum(), x, create_graph=True)
        # a gradient that requires grad reaching backward: its results refuse a second pass
        y = sq.apply(x)
        w = T.ones(2, requires_grad=True)
        h, = T.autograd.grad(y, x, grad_outputs=w, create_graph=True)
        return g, h, h.requires_grad
    same(f)

    def twice(T):
        sq = _square(T, T.autograd.function.once_differentiable)
        x = T.tensor([1., 2.], requires_grad=True)
        w = T.ones(2, requires_grad=True)
        h, = T.autograd.grad(sq.apply(x), x, grad_outputs=w, create_graph=True)
        h.sum().backward()
    raises_same(twice, RuntimeError, "trying to differentiate twice a function that was "
                "marked with @once_differentiable")


def test_backward_result_checks():
    def fn(T, grads, n_in=1):
        class P(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, *rest):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return grads(T, g)
        return P

    def count(T):
        x = T.tensor([1., 2.], requires_grad=True)
        fn(T, lambda T, g: g).apply(x, x).sum().backward()
    raises_same(count, RuntimeError, "function PBackward returned an incorrect number of "
                "gradients (expected 2, got 1)")

    def shape(T):
        x = T.tensor([1., 2.], requires_grad=True)
        fn(T, lambda T, g: T.ones(3)).apply(x).sum().backward()
    raises_same(shape, RuntimeError, "Function PBackward returned an invalid gradient at "
                "index 0 - got [3] but expected shape compatible with [2]")

    def non_tensor(T):
        x = T.tensor([1., 2.], requires_grad=True)
        fn(T, lambda T, g: (g, g)).apply(x, 2.).sum().backward()
    raises_same(non_tensor, RuntimeError, "returned a gradient different than None at "
                "position 2, but the corresponding forward input was not a Variable")

    def broadcast(T):  # a gradient the input broadcasts to is summed down; extra Nones dropped
        x = T.tensor([1., 2.], requires_grad=True)
        fn(T, lambda T, g: (T.ones(3, 2), None, None)).apply(x).sum().backward()
        return x.grad
    same(broadcast)


def test_apply_refuses_keywords():
    def f(T):
        _two(T).apply(x=T.ones(1), k=1.)
    raises_same(f, TypeError, "apply() takes no keyword arguments")


def test_needs_input_grad_in_no_grad():
    def f(T):
        got = []

        class P(T.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                got.append(ctx.needs_input_grad)
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g, g
        with T.no_grad():
            P.apply(T.ones(2, requires_grad=True), T.ones(2))
        return got
    same(f)


def _doubler(T, also=False):
    class Dbl(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return (x, x * 5) if also else x

        @staticmethod
        def backward(ctx, g, h=None):
            return g * 2 + (0 if h is None else h * 10)
    return Dbl


def test_mark_dirty_hands_back_the_argument_with_the_nodes_history():
    def f(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 1
        z = _doubler(T).apply(y)
        (y * 3).sum().backward()
        u = T.tensor([1., 2.], requires_grad=True)
        v = u * 1
        a, b = _doubler(T, True).apply(v)
        (v * 3 + b).sum().backward()
        with T.no_grad():
            w = T.ones(2)
            n = _doubler(T).apply(w)
        return x.grad, z is y, y, type(y.grad_fn).__name__, u.grad, a is v, b, n is w, w
    same(f)

    def leaf(T):
        _doubler(T).apply(T.tensor([1., 2.], requires_grad=True))
    raises_same(leaf, RuntimeError, "a leaf Variable that requires grad has been used in an "
                "in-place operation.")


def test_save_for_backward_takes_none():
    """PyTorch's tutorial LinearFunction: an optional bias saved as None"""
    def f(T):
        class LinearFunction(T.autograd.Function):
            @staticmethod
            def forward(ctx, input, weight, bias=None):
                ctx.save_for_backward(input, weight, bias)
                output = input.mm(weight.t())
                if bias is not None:
                    output += bias.unsqueeze(0).expand_as(output)
                return output

            @staticmethod
            def backward(ctx, grad_output):
                input, weight, bias = ctx.saved_tensors
                grad_input = grad_weight = grad_bias = None
                if ctx.needs_input_grad[0]:
                    grad_input = grad_output.mm(weight)
                if ctx.needs_input_grad[1]:
                    grad_weight = grad_output.t().mm(input)
                if bias is not None and ctx.needs_input_grad[2]:
                    grad_bias = grad_output.sum(0)
                return grad_input, grad_weight, grad_bias

        x = T.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        w = T.tensor([[1., 0.], [2., 1.], [0., 1.]], requires_grad=True)
        b = T.tensor([1., 2., 3.], requires_grad=True)
        y = LinearFunction.apply(x, w, b)
        y.sum().backward()
        y2 = LinearFunction.apply(x, w)
        (y2 * 2).sum().backward()
        return y, y2, x.grad, w.grad, b.grad
    same(f)

    def bad(T):
        class P(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x

            @staticmethod
            def backward(ctx, g):
                return g
        P.apply(T.ones(1, requires_grad=True))
    raises_same(bad, TypeError, "save_for_backward can only save variables, but argument 1 "
                "is of type int")


def test_saved_tensor_modified_in_place():
    def f(T):
        class P(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * x
        y = T.tensor([1., 2.], requires_grad=True) * 1
        z = P.apply(y)
        y.add_(1)
        z.sum().backward()
    for words in ("one of the variables needed for gradient computation has been modified by "
                  "an inplace operation: [torch.FloatTensor [2]]",
                  "is at version 1; expected version 0 instead."):
        raises_same(f, RuntimeError, words)
