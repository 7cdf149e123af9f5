"""What a tensor says about its view-ness and its history, as PyTorch:
Tensor._is_view() and Tensor._base (the root of a chain of views, the
very object that was viewed), detach_() refused on every view with
PyTorch's message, the requires_grad of views made under no_grad (their
base's, with ops on them recorded towards no gradient), and the grad_fn
names of view ops and common ops (type(t.grad_fn).__name__ and
t.grad_fn.name()), including in-place ops and assignments. Expected
values are written out and, when python3-torch is there, compared with
PyTorch's too."""
import pytest

import tensorgraph as tg
from conftest import SANITIZED, runtime_error_text, torch

DETACH_MSG = ("Can't detach views in-place. Use detach() instead. If you are using "
              "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
              "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
              "called on these gradients. To fix this error, please refer to the "
              "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")


def _leaf(m):
    return m.arange(12.0, dtype=m.float64).reshape(3, 4).clone().requires_grad_()


BASES = {
    'leaf': _leaf,
    'nonleaf': lambda m: _leaf(m) * 1,
    'constant': lambda m: m.arange(12.0, dtype=m.float64).reshape(3, 4).clone(),
}

VIEWS = {
    'view': lambda x: x.view(12),
    'narrow': lambda x: x.narrow(0, 1, 2),
    'slice': lambda x: x[1:],
    'select': lambda x: x[1],
    'split': lambda x: x.split(2)[0],
    'unbind': lambda x: x.unbind()[1],
    'chunk': lambda x: x.chunk(2)[1],
    't': lambda x: x.t(),
    'view_of_view': lambda x: x.view(12)[2:],
    'view_of_split': lambda x: x.split(2)[0].view(-1),
    'expand': lambda x: x[:1].expand(2, 4),
    'diagonal': lambda x: x.diagonal(),
    'unsqueeze': lambda x: x.unsqueeze(0),
}


def _detach_in_place(m, base, make, nograd):
    x = BASES[base](m)
    if nograd:
        with m.no_grad():
            v = make(x)
    else:
        v = make(x)
    v.detach_()


@pytest.mark.parametrize('nograd', [False, True], ids=['grad', 'no_grad'])
@pytest.mark.parametrize('view', list(VIEWS))
@pytest.mark.parametrize('base', list(BASES))
def test_detach_in_place_refused_on_views(base, view, nograd):
    def f(m):
        _detach_in_place(m, base, VIEWS[view], nograd)
    assert runtime_error_text(tg, f) == DETACH_MSG
    if torch is not None and not SANITIZED:
        assert runtime_error_text(torch, f) == DETACH_MSG


@pytest.mark.parametrize('base', list(BASES))
def test_detach_in_place_of_non_views(base):
    for make in (lambda x: x, lambda x: x.detach(), lambda x: x + 1, lambda x: x.clone(),
                 lambda x: x.t().reshape(12)):
        x = make(BASES[base](tg))
        assert x.detach_() is x
        assert not x.requires_grad and x.is_leaf and x.grad_fn is None
        assert not x._is_view() and x._base is None


def _view_facts(m):
    x = m.ones(2, 3, dtype=m.float64, requires_grad=True)
    y = x * 1
    a = m.arange(6.0).reshape(2, 3)
    return [
        x._is_view(), x._base is None, y._is_view(),
        x.view(6)._base is x, x.view(6)[1:]._base is x, x.view(6).view(2, 3)._base is x,
        x[0]._base is x, x.t()._base is x, x.T._base is x, x.mT._base is x,
        x.diagonal()._base is x, x.narrow(1, 0, 1)._base is x, x.unsqueeze(0)._base is x,
        x.expand(2, 2, 3)._base is x, x.split(1)[0]._base is x, x.unbind()[1]._base is x,
        x.chunk(2, 1)[0]._base is x, x.reshape(6)._base is x, x.flatten()._base is x,
        y.view(6)._base is y, y[1:].t()._base is y,
        a._is_view(), a.view(6)._base is a._base, a._base.shape == (6,),
        x.detach()._is_view(), x.detach()._base is None,
        x.t().reshape(6)._is_view(), x.t().reshape(6)._base is None,
        x.t().contiguous()._is_view(), x.clone()._is_view(), (x + 1)._is_view(),
        x[[0]]._is_view(), x[x > 0]._is_view(), x.max(1).values._is_view(),
        (x @ x.t())._is_view(), (x[None] @ x.t()[None])._is_view(),
    ]


def test_is_view_and_base():
    facts = _view_facts(tg)
    assert facts == [False, True, False] + [True] * 18 + [True, True, True] + \
        [False, True, False, True, False, False, False, False, False, False, False, False]
    if torch is not None:
        assert _view_facts(torch) == facts


def _copies(m):
    x = m.arange(6.0).reshape(2, 3)
    return [t._is_view() for t in (
        m.diag_embed(x), x.rot90(), x.rot90(3), x.take(m.tensor([0, 5])), m.kron(x, x),
        x.roll(1), x[[0, 1]], x.max(1).values, m.nn.functional.linear(x, m.ones(4, 3)),
        m.nn.functional.linear(x[None], m.ones(4, 3), m.ones(4)))]


def test_results_made_as_copies_are_no_views():
    expected = [False] * 9 + [True]  # a batched linear with bias is a view in PyTorch
    assert _copies(tg) == expected
    if torch is not None:
        assert _copies(torch) == expected


def test_base_is_the_wrapper_or_a_fresh_one():
    x = tg.ones(4)
    v = x[1:]
    assert v._base is x
    del x
    b = v._base  # the viewed tensor outlives its wrapper: a new wrapper of it
    assert isinstance(b, tg.Tensor) and b.shape == (4,) and v._base is b  # b holds it now
    b[1] = 7.0
    assert v[0].item() == 7.0


def test_base_follows_a_rebound_wrapper():
    y = tg.ones(2, 3) * 1
    y.detach_()  # the wrapper now holds a new tensor; views of it find the wrapper
    assert y.view(6)._base is y
    x = tg.ones(2, 3)
    with tg.no_grad():
        x.t_()
    assert not x._is_view() and x.reshape(6)._base is None and x.view(3, 2)._base is x


def _nograd_view_facts(m):
    out = []
    for make in (lambda: m.ones(3, dtype=m.float64, requires_grad=True),
                 lambda: m.ones(3, dtype=m.float64, requires_grad=True) * 1,
                 lambda: m.arange(3.0, dtype=m.float64).reshape(3).clone().requires_grad_(),
                 lambda: m.arange(4.0, dtype=m.float64).reshape(2, 2).requires_grad_(),
                 lambda: m.ones(3, dtype=m.float64)):
        x = make()
        with m.no_grad():
            v = x.view(-1)
            w = x[1:]
        y = (v * 2).sum()
        out.append((v.requires_grad, v.is_leaf, v.grad_fn is None, w.requires_grad,
                    y.requires_grad, y.grad_fn is not None))
        if y.requires_grad:  # recorded towards nothing, as PyTorch's
            y.backward()
            assert (not x.is_leaf or x.grad is None) and v.grad is None
    return out


def test_views_made_under_no_grad_report_their_base():
    facts = _nograd_view_facts(tg)
    t, f = True, False
    assert facts == [(t, t, t, t, t, t), (t, t, t, t, t, t), (t, t, t, t, t, t),
                     (f, t, t, f, f, f), (f, t, t, f, f, f)]
    if torch is not None:
        assert _nograd_view_facts(torch) == facts


def test_in_place_on_a_no_grad_view_with_grad_mode_on():
    def f(m):
        x = m.ones(3, requires_grad=True)
        with m.no_grad():
            v = x.view(3)
        v.mul_(2)
    msg = runtime_error_text(tg, f)
    assert msg.startswith("A view was created in no_grad mode and is being modified inplace "
                          "with grad mode enabled.")
    if torch is not None and not SANITIZED:
        assert runtime_error_text(torch, f) == msg
    x = tg.ones(3, requires_grad=True)
    with tg.no_grad():
        v = x.view(3)
        v.mul_(2)  # inside no_grad: written through
    assert x.tolist() == [2.0, 2.0, 2.0]


def _x(m):
    return (m.arange(24.0, dtype=m.float64).reshape(2, 3, 4) + 1).requires_grad_()


def _m(m):
    return (m.arange(9.0, dtype=m.float64).reshape(3, 3) + 1).requires_grad_()


def _inplace(f):
    def g(m):
        y = _x(m) * 1
        r = f(m, y)
        return y if r is None else r
    return g


def _setitem(idx):
    def f(m, y):
        y[idx] = 1.0
    return f


NAMES = [  # (case, make, PyTorch's grad_fn name)
    ('view', lambda m: _x(m).view(6, 4), 'ViewBackward0'),
    ('reshape_view', lambda m: _x(m).reshape(6, 4), 'ReshapeAliasBackward0'),
    ('reshape_copy', lambda m: _x(m).transpose(0, 1).reshape(-1), 'UnsafeViewBackward0'),
    ('flatten', lambda m: _x(m).flatten(), 'ReshapeAliasBackward0'),
    ('unflatten', lambda m: _x(m).unflatten(2, (2, 2)), 'ViewBackward0'),
    ('select_int', lambda m: _x(m)[0], 'SelectBackward0'),
    ('select', lambda m: _x(m).select(1, 1), 'SelectBackward0'),
    ('ellipsis_int', lambda m: _x(m)[..., 1], 'SelectBackward0'),
    ('slice', lambda m: _x(m)[:, 1:], 'SliceBackward0'),
    ('narrow', lambda m: _x(m).narrow(2, 1, 2), 'SliceBackward0'),
    ('none', lambda m: _x(m)[None], 'UnsqueezeBackward0'),
    ('unsqueeze', lambda m: _x(m).unsqueeze(-1), 'UnsqueezeBackward0'),
    ('squeeze', lambda m: _x(m)[:, :1].squeeze(), 'SqueezeBackward0'),
    ('squeeze_dim', lambda m: _x(m)[:, :1].squeeze(1), 'SqueezeBackward1'),
    ('transpose', lambda m: _x(m).transpose(0, 1), 'TransposeBackward0'),
    ('swapaxes', lambda m: _x(m).swapaxes(0, 1), 'TransposeBackward0'),
    ('mT', lambda m: _x(m).mT, 'TransposeBackward0'),
    ('t', lambda m: _m(m).t(), 'TBackward0'),
    ('t_1d', lambda m: _m(m)[0].t(), 'TBackward0'),
    ('T', lambda m: _m(m).T, 'PermuteBackward0'),
    ('permute', lambda m: _x(m).permute(2, 0, 1), 'PermuteBackward0'),
    ('movedim', lambda m: _x(m).movedim(0, 2), 'PermuteBackward0'),
    ('expand', lambda m: _x(m)[:, :1].expand(2, 3, 4), 'ExpandBackward0'),
    ('diagonal', lambda m: _m(m).diagonal(), 'DiagonalBackward0'),
    ('split', lambda m: _x(m).split(1)[1], 'SplitBackward0'),
    ('chunk', lambda m: _x(m).chunk(2, dim=2)[1], 'SplitBackward0'),
    ('unbind', lambda m: _x(m).unbind(1)[1], 'UnbindBackward0'),
    ('index', lambda m: _x(m)[[0, 1]], 'IndexBackward0'),
    ('mask', lambda m: _x(m)[_x(m) > 3], 'IndexBackward0'),
    ('sum', lambda m: _x(m).sum(), 'SumBackward0'),
    ('sum_dim', lambda m: _x(m).sum(1), 'SumBackward1'),
    ('mean_dim', lambda m: _x(m).mean(-1, keepdim=True), 'MeanBackward1'),
    ('prod_dim', lambda m: _x(m).prod(1), 'ProdBackward1'),
    ('max', lambda m: _x(m).max(), 'MaxBackward1'),
    ('max_dim', lambda m: _x(m).max(1)[0], 'MaxBackward0'),
    ('min_dim', lambda m: _x(m).min(1).values, 'MinBackward0'),
    ('amax', lambda m: _x(m).amax(1), 'AmaxBackward0'),
    ('norm', lambda m: _x(m).norm(), 'NormBackward1'),
    ('mm', lambda m: _m(m).mm(_m(m)), 'MmBackward0'),
    ('matmul_op', lambda m: _m(m) @ _m(m), 'MmBackward0'),
    ('mv', lambda m: _m(m) @ _m(m)[0], 'MvBackward0'),
    ('dot', lambda m: _m(m)[0].dot(_m(m)[1]), 'DotBackward0'),
    ('vec_mat', lambda m: m.matmul(_m(m)[0], _m(m)), 'SqueezeBackward3'),
    ('bmm', lambda m: _x(m).bmm(_x(m).transpose(1, 2)), 'BmmBackward0'),
    ('batched', lambda m: _x(m) @ _x(m).transpose(1, 2), 'UnsafeViewBackward0'),
    ('addmm', lambda m: m.addmm(_m(m), _m(m), _m(m)), 'AddmmBackward0'),
    ('linear', lambda m: m.nn.functional.linear(_m(m), _m(m)), 'MmBackward0'),
    ('linear_bias', lambda m: m.nn.functional.linear(_m(m), _m(m), _m(m)[0]),
     'AddmmBackward0'),
    ('linear_3d', lambda m: m.nn.functional.linear(_x(m), m.ones(5, 4, dtype=m.float64)),
     'UnsafeViewBackward0'),
    ('linear_3d_bias', lambda m: m.nn.functional.linear(_x(m), m.ones(5, 4, dtype=m.float64),
                                                        m.ones(5, dtype=m.float64)),
     'ViewBackward0'),
    ('conv_transpose2d', lambda m: m.nn.functional.conv_transpose2d(
        _x(m)[None], m.ones(2, 1, 2, 2, dtype=m.float64)), 'ConvolutionBackward0'),
    ('cat', lambda m: m.cat([_x(m), _x(m)]), 'CatBackward0'),
    ('stack', lambda m: m.stack([_x(m), _x(m)], 1), 'StackBackward0'),
    ('rsub', lambda m: 1 - _x(m), 'RsubBackward1'),
    ('rdiv', lambda m: 2 / _x(m), 'MulBackward0'),
    ('pow', lambda m: _x(m) ** 2, 'PowBackward0'),
    ('rpow', lambda m: 2 ** _x(m), 'PowBackward1'),
    ('pow_tensor', lambda m: _x(m).pow(_x(m)), 'PowBackward1'),
    ('square', lambda m: _x(m).square(), 'PowBackward0'),
    ('clamp', lambda m: _x(m).clamp(1, 3), 'ClampBackward1'),
    ('to_double', lambda m: _x(m).float().double(), 'ToCopyBackward0'),
    ('masked_fill', lambda m: _x(m).masked_fill(_x(m) > 3, 0.0), 'MaskedFillBackward0'),
    ('tril', lambda m: _m(m).tril(), 'TrilBackward0'),
    ('repeat', lambda m: _x(m).repeat(2, 1, 1), 'RepeatBackward0'),
    ('flip', lambda m: _x(m).flip(0), 'FlipBackward0'),
    ('roll', lambda m: _x(m).roll(1), 'RollBackward0'),
    ('sort', lambda m: _x(m).sort(1)[0], 'SortBackward0'),
    ('trace', lambda m: _m(m).trace(), 'TraceBackward0'),
    ('cumprod', lambda m: _x(m).cumprod(1), 'CumprodBackward0'),
    ('log1p', lambda m: _x(m).log1p(), 'Log1PBackward0'),
    ('lerp', lambda m: m.lerp(_x(m), _x(m) * 2, 0.5), 'LerpBackward0'),
    ('scatter_value', lambda m: _x(m).scatter(1, m.zeros(2, 1, 4, dtype=m.int64), 0.0),
     'ScatterBackward1'),
    ('index_add', lambda m: _m(m).index_add(0, m.tensor([0, 2]), _m(m)[:2]),
     'IndexAddBackward0'),
    ('div_floor', lambda m: m.div(_x(m), 2, rounding_mode='floor'), 'DivBackward2'),
    ('mse', lambda m: m.nn.functional.mse_loss(_m(m), _m(m) * 2), 'MseLossBackward0'),
    ('cross_entropy', lambda m: m.nn.functional.cross_entropy(_m(m), m.tensor([0, 1, 2])),
     'NllLossBackward0'),
    ('nll', lambda m: m.nn.functional.nll_loss(_m(m), m.tensor([0, 1, 2])), 'NllLossBackward0'),
    ('bce', lambda m: m.nn.functional.binary_cross_entropy(_m(m).sigmoid(), m.ones(3, 3,
                                                           dtype=m.float64)),
     'BinaryCrossEntropyBackward0'),
    ('bce_logits', lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        _m(m), m.ones(3, 3, dtype=m.float64)), 'BinaryCrossEntropyWithLogitsBackward0'),
    ('smooth_l1', lambda m: m.nn.functional.smooth_l1_loss(_m(m), _m(m) * 2),
     'SmoothL1LossBackward0'),
    ('pad', lambda m: m.nn.functional.pad(_x(m), (1, 1)), 'ConstantPadNdBackward0'),
    ('pad_reflect', lambda m: m.nn.functional.pad(_x(m), (1, 1), mode='reflect'),
     'ReflectionPad1DBackward0'),
    ('conv2d', lambda m: m.nn.functional.conv2d(_x(m)[None], m.ones(1, 2, 2, 2,
                                                dtype=m.float64)), 'ConvolutionBackward0'),
    ('max_pool2d', lambda m: m.nn.functional.max_pool2d(_x(m)[None], 2),
     'MaxPool2DWithIndicesBackward0'),
    ('layer_norm', lambda m: m.nn.functional.layer_norm(_x(m), (4,)), 'NativeLayerNormBackward0'),
    ('atan2', lambda m: m.atan2(_x(m), _x(m)), 'Atan2Backward0'),
    ('kron', lambda m: m.kron(_m(m), _m(m)), 'UnsafeViewBackward0'),
    ('take', lambda m: _m(m).take(m.tensor([0, 4])), 'TakeBackward0'),
    ('rot90', lambda m: _m(m).rot90(), 'Rot90Backward0'),
    ('rot90_2', lambda m: _m(m).rot90(2), 'Rot90Backward0'),
    ('mul_', _inplace(lambda m, y: y.mul_(2)), 'MulBackward0'),
    ('add_', _inplace(lambda m, y: y.add_(2)), 'AddBackward0'),
    ('sub_', _inplace(lambda m, y: y.sub_(_x(m))), 'SubBackward0'),
    ('div_', _inplace(lambda m, y: y.div_(2)), 'DivBackward0'),
    ('iadd', _inplace(lambda m, y: y.__iadd__(_x(m))), 'AddBackward0'),
    ('isub', _inplace(lambda m, y: y.__isub__(1)), 'SubBackward0'),
    ('imul', _inplace(lambda m, y: y.__imul__(_x(m))), 'MulBackward0'),
    ('itruediv', _inplace(lambda m, y: y.__itruediv__(2)), 'DivBackward0'),
    ('exp_', _inplace(lambda m, y: y.exp_()), 'ExpBackward0'),
    ('clamp_', _inplace(lambda m, y: y.clamp_(0, 1)), 'ClampBackward1'),
    ('pow_', _inplace(lambda m, y: y.pow_(2)), 'PowBackward0'),
    ('masked_fill_', _inplace(lambda m, y: y.masked_fill_(y > 3, 0.0)), 'MaskedFillBackward0'),
    ('zero_', _inplace(lambda m, y: y.zero_()), 'ZeroBackward0'),
    ('fill_', _inplace(lambda m, y: y.fill_(2.0)), 'FillBackward2'),
    ('index_put_', _inplace(lambda m, y: y.index_put_((m.tensor([0]),), m.tensor(1.0,
                                                      dtype=m.float64))), 'IndexPutBackward0'),
    ('t_', _inplace(lambda m, y: y[0].t_()), 'TBackward1'),
    ('unsqueeze_', _inplace(lambda m, y: y.unsqueeze_(0)), 'UnsqueezeBackward1'),
    ('squeeze_', _inplace(lambda m, y: y.unsqueeze_(1).squeeze_()), 'SqueezeBackward2'),
    ('squeeze_dim', _inplace(lambda m, y: y.unsqueeze_(1).squeeze_(1)), 'SqueezeBackward3'),
    ('transpose_', _inplace(lambda m, y: y.transpose_(0, 2)), 'TransposeBackward1'),
    ('swapdims_', _inplace(lambda m, y: y.swapdims_(0, 1)), 'TransposeBackward1'),
    ('setitem', _inplace(_setitem(0)), 'CopySlices'),
    ('setitem_slice', _inplace(_setitem((slice(None), 1))), 'CopySlices'),
    ('setitem_index', _inplace(lambda m, y: _setitem(m.tensor([0, 1]))(m, y)),
     'IndexPutBackward0'),
]

# PyTorch's C++ nodes without a Backward suffix: name() says their namespace
QUALIFIED = {'CopySlices', 'CopyBackwards'}


@pytest.mark.parametrize('case,make,expected', NAMES, ids=[c[0] for c in NAMES])
def test_grad_fn_names(case, make, expected):
    t = make(tg)
    assert type(t.grad_fn).__name__ == expected
    name = 'torch::autograd::' + expected if expected in QUALIFIED else expected
    assert t.grad_fn.name() == name
    assert f'grad_fn=<{expected}>' in repr(t)
    assert repr(t.grad_fn).startswith(f'<{expected} object at 0x')
    if torch is not None:
        r = make(torch)
        assert type(r.grad_fn).__name__ == expected
        assert r.grad_fn.name() == name


def test_copy_and_custom_function_names():
    x = tg.ones(3, requires_grad=True)
    y = tg.zeros(3).copy_(x)
    assert type(y.grad_fn).__name__ == 'CopyBackwards'
    assert y.grad_fn.name() == 'torch::autograd::CopyBackwards'

    class MyFn(tg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    z = MyFn.apply(x)
    assert type(z.grad_fn).__name__ == 'MyFnBackward' and z.grad_fn.name() == 'MyFnBackward'


def test_names_given_to_fresh_results_only():
    """naming a result never renames the node of a tensor the caller holds"""
    x = tg.ones(2, 3, requires_grad=True)
    y = x * 2
    assert y.roll(0).grad_fn.name() in ('MulBackward0', 'RollBackward0')
    assert y.grad_fn.name() == 'MulBackward0'
    z = y.t()
    w = z.t()  # z's node is held by w's edge now: not renamed by later ops on z
    assert z.grad_fn.name() == 'TBackward0' and w.grad_fn.name() == 'TBackward0'
    y.sum().backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2
