"""tg.autograph's source conversion run eagerly: converted code behaves
exactly as the original Python (values, gradients, Python semantics of
and/or, loops' else, returns from loops, closures, globals), Python
values stay Python, what is and is not converted, .code, and the errors
found while converting (file, line and source line of the user's code)."""
import inspect

import numpy as np
import pytest

import tensorgraph as tg
from tensorgraph import autograph
from tensorgraph.autograph import ConversionError

import autograph_programs as P


def same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, tg.Tensor):
        assert isinstance(b, tg.Tensor) and a.dtype == b.dtype
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    else:
        assert type(a) is type(b) and a == b


def f64(v):
    return tg.tensor(v, dtype=tg.float64)


PROGRAMS = [
    (P.collatz, [(n,) for n in (1, 6, 7, 27)] + [(tg.tensor(n),) for n in (1, 6, 7)]),
    (P.newton_sqrt, [(2.0,), (f64(2.0),), (f64(81.0),)]),
    (P.piecewise, [(v,) for v in (-3.0, 0.5, 2.0, 4.0)] + [(f64(v),) for v in (-3., .5, 2., 4.)]),
    (P.sum_until_negative, [(f64([1., 2., -1., 5.]),), (f64([1., 2., 3.]),), ([3, -1, 2],)]),
    (P.power_loop, [(f64(1.5), 4), (f64(1.5), tg.tensor(3)), (2, 0)]),
    (P.clipped_steps, [(f64([1., 5., 2.]), 3.0), (f64([1., 5., 2.]), f64(0.5))]),
    (P.first_index_over, [(f64([1., 5., 2.]), 3.0), (f64([1., 2.]), 3.0)]),
    (P.and_or, [(f64(a), f64(b)) for a in (-2., 3.) for b in (-1., 2.)] + [(0, 5), (2, 0)]),
    (P.conditional_expression, [(f64(2.),), (f64(-3.),), (4,)]),
    (P.chained, [(f64(.5),), (f64(2.),), (0,)]),
    (P.outer_calls_inner, [(f64([-2.5, 1.]),), (f64([1., 1.]),)]),
]


@pytest.mark.parametrize("fn,cases", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_converted_eager_equals_python(fn, cases):
    conv = autograph.convert(fn)
    assert conv is not fn and conv.__ag_converted__
    for args in cases:
        same(conv(*args), fn(*args))


@pytest.mark.parametrize("fn,cases", PROGRAMS[:7], ids=[p[0].__name__ for p in PROGRAMS[:7]])
def test_converted_eager_gradients(fn, cases):
    conv = autograph.convert(fn)
    for args in cases:
        if not isinstance(args[0], tg.Tensor) or not args[0].dtype.is_floating_point:
            continue
        grads = []
        for f in (fn, conv):
            x = args[0].detach().clone().requires_grad_(True)
            out = f(x, *args[1:])
            out.sum().backward()
            grads.append(x.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])


def test_python_semantics_kept():
    def logic(a, b):
        return a or b, a and b, not a

    def loops(xs):
        out = []
        for x in xs:
            if x == 3:
                break
            out.append(x)
        else:
            out.append('no break')
        i = 0
        while i < 2:
            i += 1
        else:
            out.append(i)
        return out

    for a, b in [(0, 'x'), ([], [1]), ('y', 0), (2, 3)]:
        assert autograph.convert(logic)(a, b) == logic(a, b)
    for xs in ([1, 2], [1, 3, 4], []):
        assert autograph.convert(loops)(xs) == loops(xs)


COUNTER = 0


def bump_global(k):
    global COUNTER
    for _ in range(k):
        if COUNTER >= 0:
            COUNTER += 1
    return COUNTER


def test_globals_closures_defaults_and_in_place():
    global COUNTER
    COUNTER = 0
    assert autograph.convert(bump_global)(3) == 3 and COUNTER == 3

    scale = 2

    def closure(x, *rest, extra=1, **kw):
        nonlocal scale
        if x > 0:
            scale = scale + 1
        return x * scale + extra + sum(rest) + len(kw)

    conv = autograph.convert(closure)
    assert conv(1, 5, extra=0, a=1) == 1 * 3 + 0 + 5 + 1 and scale == 3
    scale = 10  # the converted function shares the closure cell
    assert conv(-1) == -10 + 1

    t = tg.zeros(2)

    def in_place(x):
        x += 1  # a concrete tensor: modified in place, as Python does
        return x

    r = autograph.convert(in_place)(t)
    assert r is t and t.tolist() == [1.0, 1.0]


def test_undefined_variable_fails_as_python():
    def maybe(x):
        if x > 0:
            y = 1
        return y

    conv = autograph.convert(maybe)
    assert conv(1) == 1
    with pytest.raises(UnboundLocalError):
        maybe(-1)
    with pytest.raises(UnboundLocalError, match="'y'"):
        conv(-1)


def test_what_is_converted():
    assert autograph.convert(tg.relu) is tg.relu            # library code
    assert autograph.convert(np.sum) is np.sum              # numpy
    assert autograph.convert(inspect.getsource) is inspect.getsource  # stdlib
    lam = lambda x: x if x > 0 else -x  # noqa: E731
    assert autograph.convert(lam) is lam

    def gen(x):
        yield x

    assert autograph.convert(gen) is gen

    @autograph.do_not_convert
    def opted_out(x):
        return x

    assert autograph.convert(opted_out) is opted_out
    conv = autograph.convert(P.collatz)
    assert autograph.convert(P.collatz) is conv  # cached
    assert autograph.convert(conv) is conv


def test_methods_modules_and_nested_calls_are_converted():
    from tensorgraph.autograph.conversion import converted_callable
    s = P.Scaler(3.0)
    m = converted_callable(s.apply)
    assert m.__func__.__ag_converted__ and m.__self__ is s
    x = f64([-2.5, 1.0])
    same(m(x), s.apply(x))
    g = P.Gate(3)
    call = converted_callable(g)
    y = f64([3.0, -2.0, 1.0])
    same(call(y), g(y))
    assert "ag__.while_stmt" in call.args[0].__func__.__ag_source__
    # a function the converted one calls is converted when called
    assert "ag__.cc(helper_negative)" in autograph.to_code(P.outer_calls_inner)


def test_code_shows_converted_source():
    f = tg.function(P.piecewise)
    code = f.code
    assert code.startswith("def piecewise(x):") and "ag__.if_stmt" in code
    ast_ok = compile(code, "<code>", "exec")
    assert ast_ok is not None
    with pytest.raises(ValueError, match="autograph=False"):
        tg.function(P.piecewise, autograph=False).code


def jump_in_try(xs):
    for x in xs:
        try:
            if x > 0:
                break
        except ValueError:
            pass
    return xs


def test_unsupported_construct_names_file_and_line():
    with pytest.raises(ConversionError) as e:
        tg.function(jump_in_try)
    err = e.value
    lines, first = inspect.getsourcelines(jump_in_try)
    assert err.filename == __file__ and err.lineno == first + 4
    assert err.source_line == "break"
    assert f'File "{__file__}", line {first + 4}' in str(err) and "'try' block" in str(err)
