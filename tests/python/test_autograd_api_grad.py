"""torch.autograd.grad's options and errors, a non-leaf's .grad warning
and torch.autograd.functional's argument checks and strict mode, compared
with PyTorch 1.13."""
import warnings

from autograd_api_oracle import raises_same, same
from conftest import needs_torch

pytestmark = needs_torch


def _x(T):
    return T.tensor([1., 2.], requires_grad=True)


def test_grad_argument_errors():
    raises_same(lambda T: T.autograd.grad((_x(T) * 2).sum(), []), ValueError,
                "grad requires non-empty inputs.")
    raises_same(lambda T: T.autograd.grad((_x(T) * 2).sum(), [_x(T), T.ones(1)]),
                RuntimeError, "One of the differentiated Tensors does not require grad")
    raises_same(lambda T: T.autograd.grad(T.ones(2).sum(), [_x(T)]), RuntimeError,
                "element 0 of tensors does not require grad and does not have a grad_fn")
    raises_same(lambda T: T.autograd.grad(_x(T) * 2, _x(T), grad_outputs=T.ones(3)),
                RuntimeError, "Mismatch in shape: grad_output[0] has a shape of ")
    raises_same(lambda T: T.autograd.grad(_x(T) * 2, _x(T)), RuntimeError,
                "grad can be implicitly created only for scalar outputs")

    def unused(T):
        x = _x(T)
        T.autograd.grad((x * 2).sum(), [x, T.ones(1, requires_grad=True)])
    raises_same(unused, RuntimeError, "One of the differentiated Tensors appears to not have "
                "been used in the graph. Set allow_unused=True if this is the desired behavior.")

    def twice(T):
        x = _x(T)
        y = x.exp().sum()
        T.autograd.grad(y, x)
        T.autograd.grad(y, x)
    raises_same(twice, RuntimeError, "Trying to backward through the graph a second time")


def test_grad_options():
    def f(T):
        x, z = _x(T), T.ones(1, requires_grad=True)
        unused = T.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
        g, = T.autograd.grad((x ** 3).sum(), x, create_graph=True)
        h, = T.autograd.grad(g.sum(), x, only_inputs=True)
        batched = T.autograd.grad(x * x, x, grad_outputs=T.tensor([[1., 0.], [0., 1.], [1., 1.]]),
                                  is_grads_batched=True)
        two = T.autograd.grad([(x * 2).sum(), (x * 3).sum()], x, grad_outputs=[None, T.tensor(2.)])
        return unused, g, h, batched, two
    same(f)


def test_non_leaf_grad_warns():
    def f(T):
        x = _x(T)
        y = x * 2
        y.sum().backward()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            g = y.grad
            leaf = x.grad
        z = x * 3
        z.retain_grad()
        z.sum().backward()
        with warnings.catch_warnings(record=True) as w2:
            warnings.simplefilter('always')
            kept = z.grad
        return g, leaf, [str(m.message)[:60] for m in w], kept, len(w2)
    same(f)


def test_functional_argument_errors():
    F = 'autograd.functional'

    def fn(T, name):
        return getattr(T.autograd.functional, name)
    raises_same(lambda T: fn(T, 'vjp')(lambda a: a * 2, T.ones(2), T.ones(3)), RuntimeError,
                "v has invalid size: should be ")
    raises_same(lambda T: fn(T, 'vjp')(lambda a, b: (a, b), (T.ones(2), T.ones(2)), T.ones(2)),
                RuntimeError, "v is a tuple of invalid length: should be 2 but got 1.")
    raises_same(lambda T: fn(T, 'jvp')(lambda a, b: a * b, (T.ones(2), T.ones(2)),
                                       (T.ones(2), T.ones(3))),
                RuntimeError, "Entry 1 in v has invalid size: should be ")
    raises_same(lambda T: fn(T, 'vjp')(lambda a: a * 2, T.ones(2)), RuntimeError,
                "The vector v can only be None if the user-provided function returns a single "
                "Tensor with a single element.")
    raises_same(lambda T: fn(T, 'jvp')(lambda a: a * 2, T.ones(2)), RuntimeError,
                "The vector v can only be None if the input to the user-provided function is a "
                "single Tensor with a single element.")
    for name in ('hessian', 'vhp', 'hvp'):
        raises_same(lambda T: fn(T, name)(lambda a: a * 2, T.ones(2), *(
                    () if name == 'hessian' else (T.ones(2),))), RuntimeError,
                    f"The Tensor returned by the function given to {name} should contain a "
                    "single element")
    assert F


def test_functional_strict():
    def fn(T, name):
        return getattr(T.autograd.functional, name)
    const = 'Output 0 of the user-provided function does not require gradients.'
    for name in ('jacobian', 'vjp', 'jvp'):
        raises_same(lambda T: fn(T, name)(lambda a: T.ones(2), T.ones(2), T.ones(2),
                                          strict=True) if name != 'jacobian' else
                    fn(T, name)(lambda a: T.ones(2), T.ones(2), strict=True), RuntimeError, const)
    raises_same(lambda T: fn(T, 'jacobian')(lambda a, b: a * 2, (T.ones(2), T.ones(2)),
                                            strict=True),
                RuntimeError, "Output 0 of the user-provided function is independent of input 1. "
                "This is not allowed in strict mode.")
    raises_same(lambda T: fn(T, 'vjp')(lambda a, b: (a * 2).sum(), (T.ones(2), T.ones(2)),
                                       strict=True),
                RuntimeError, "The output of the user-provided function is independent of "
                "input 1. This is not allowed in strict mode.")
    raises_same(lambda T: fn(T, 'jacobian')(lambda a: a, T.ones(2), strict=True,
                                            vectorize=True),
                RuntimeError, "`strict=True` and `vectorized=True` are not supported together.")

    def ok(T):
        return (fn(T, 'jacobian')(lambda a: a ** 2, T.tensor([1., 2.]), strict=True),
                fn(T, 'vjp')(lambda a: a ** 2, T.tensor([1., 2.]), T.ones(2), strict=True),
                fn(T, 'hvp')(lambda a: (a ** 3).sum(), T.tensor([1., 2.]), T.ones(2),
                             strict=True))
    same(ok)


def test_backward_gradient_of_another_shape():
    raises_same(lambda T: (_x(T) * 2).backward(T.ones(3)), RuntimeError,
                "Mismatch in shape: grad_output[0] has a shape of ")
    raises_same(lambda T: T.autograd.backward([_x(T) * 2], [T.ones(1, 2)]),
                RuntimeError, "Mismatch in shape: grad_output[0] has a shape of ")


def test_hook_changing_the_size_is_named():
    def f(T):
        def doubling(g):
            return T.cat([g, g])
        y = _x(T) * 2
        y.register_hook(doubling)
        y.sum().backward()
    raises_same(f, RuntimeError, "hook 'doubling' has changed the size of value")
