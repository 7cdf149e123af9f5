"""nn.Module, optimizer and scheduler API behaviours found different from
PyTorch 1.13 by hand-testing next to the differential fuzzers: the
state_dict machinery (PyTorch's _load_from_state_dict algorithm, messages,
_metadata versions, hooks, extra state, lazy modules), __setattr__ and
registration messages, multi-line extra_repr, ModuleList indexing,
Module.type, optimizer.state and param-group checks, the scheduler's
step-order warning. PyTorch runs here only where it does not raise (its
messages are copied in by hand: see conftest)."""
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, torch

nn = tg.nn
with_torch = pytest.mark.skipif(torch is None or SANITIZED,
                                reason="python3-torch missing, or under ASan")


def _raises(exc, fn):
    with pytest.raises(exc) as e:
        fn()
    return str(e.value)


# ---- load_state_dict ------------------------------------------------------------------
def test_strict_message_is_pytorchs():
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    sd = m.state_dict()
    del sd['1.running_mean']
    sd['1.foo'] = tg.zeros(1)
    sd['2.weight'] = tg.zeros(1)
    msg = _raises(RuntimeError, lambda: m.load_state_dict(sd))
    # the root's unexpected keys come before its children's, as PyTorch's walk finds them
    assert msg == ('Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in '
                   'state_dict: "1.running_mean". \n\tUnexpected key(s) in state_dict: '
                   '"2.weight", "1.foo". ')
    r = m.load_state_dict(sd, strict=False)
    assert r.missing_keys == ['1.running_mean'] and r.unexpected_keys == ['2.weight', '1.foo']


def test_incompatible_keys_repr():
    m = nn.Linear(2, 3)
    r = m.load_state_dict(m.state_dict())
    assert repr(r) == str(r) == '<All keys matched successfully>'
    r = m.load_state_dict({}, strict=False)
    assert repr(r) == "_IncompatibleKeys(missing_keys=['weight', 'bias'], unexpected_keys=[])"


def test_size_mismatch_message_and_partial_copy():
    m = nn.Linear(2, 2)
    msg = _raises(RuntimeError, lambda: m.load_state_dict({'weight': tg.ones(2, 2),
                                                           'bias': tg.ones(5)}))
    assert msg == ('Error(s) in loading state_dict for Linear:\n\tsize mismatch for bias: '
                   'copying a param with shape tensorgraph.Size([5]) from checkpoint, the shape '
                   'in current model is tensorgraph.Size([2]).')
    # PyTorch copies what it can before raising
    assert m.weight.detach().tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_non_tensor_value_and_key_for_none_parameter():
    m = nn.Linear(1, 1, bias=False)
    msg = _raises(RuntimeError, lambda: m.load_state_dict({'weight': [[1.0]]}))
    assert msg.endswith('While copying the parameter named "weight", expected torch.Tensor or '
                        "Tensor-like object from checkpoint but received <class 'list'>")
    msg = _raises(RuntimeError, lambda: m.load_state_dict({'weight': tg.ones(1, 1),
                                                           'bias': tg.ones(1)}))
    assert msg == ('Error(s) in loading state_dict for Linear:\n\tUnexpected key(s) in '
                   'state_dict: "bias". ')


def test_metadata_and_batchnorm_version():
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    sd = m.state_dict()
    assert dict(sd._metadata) == {'': {'version': 1}, '0': {'version': 1},
                                  '1': {'version': 2}}
    bn = nn.BatchNorm1d(3)
    bn.num_batches_tracked.fill_(5)
    sd = bn.state_dict()
    del sd['num_batches_tracked']
    # version 2 saved it: its absence is missing
    assert 'Missing key(s) in state_dict: "num_batches_tracked". ' in \
        _raises(RuntimeError, lambda: bn.load_state_dict(sd))
    sd._metadata['']['version'] = 1  # saved before it existed: it loads as 0
    assert repr(bn.load_state_dict(sd)) == '<All keys matched successfully>'
    assert bn.num_batches_tracked.item() == 0
    sd = {k: v for k, v in bn.state_dict().items() if k != 'num_batches_tracked'}
    assert not bn.load_state_dict(sd).missing_keys  # no metadata: as old


def test_zero_dim_entry_from_one_element_tensor():
    bn = nn.BatchNorm1d(2)
    sd = bn.state_dict()
    sd['num_batches_tracked'] = tg.tensor([7])
    bn.load_state_dict(sd)
    assert bn.num_batches_tracked.item() == 7 and bn.num_batches_tracked.ndim == 0


def test_instance_norm_old_running_stats():
    m = nn.InstanceNorm1d(3)
    msg = _raises(RuntimeError, lambda: m.load_state_dict({'running_mean': tg.zeros(3),
                                                           'running_var': tg.ones(3)}))
    assert msg.startswith('Error(s) in loading state_dict for InstanceNorm1d:\n\tUnexpected '
                          'running stats buffer(s) "running_mean" and "running_var" for '
                          'InstanceNorm1d with track_running_stats=False.')
    sd = OrderedDict(running_mean=tg.zeros(3))
    sd._metadata = {'': {'version': 2}}
    assert 'Unexpected key(s) in state_dict: "running_mean". ' in \
        _raises(RuntimeError, lambda: m.load_state_dict(sd))


def test_state_dict_hooks():
    lin = nn.Linear(2, 2)
    def drop_bias(mod, sd, prefix, meta):
        del sd[prefix + 'bias']
    lin._register_state_dict_hook(drop_bias)
    seq = nn.Sequential(lin)
    assert list(seq.state_dict()) == ['0.weight']
    seen = []
    lin._register_load_state_dict_pre_hook(
        lambda sd, prefix, meta, strict, *lists: seen.append((prefix, sorted(sd), meta, strict)))
    lin._register_load_state_dict_pre_hook(
        lambda mod, *a: seen.append(type(mod).__name__), with_module=True)
    post = []
    seq.register_load_state_dict_post_hook(
        lambda mod, keys: post.append(list(keys.missing_keys)) or keys.missing_keys.clear())
    r = seq.load_state_dict(seq.state_dict())  # the hook dropped 0.bias: missing, then cleared
    assert seen == [('0.', ['0.weight'], {'version': 1}, True), 'Linear']
    assert post == [['0.bias']] and repr(r) == '<All keys matched successfully>'
    seq.register_load_state_dict_post_hook(lambda mod, keys: 5)
    with pytest.raises(AssertionError):
        seq.load_state_dict(seq.state_dict(), strict=False)


def test_extra_state():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.v = nn.Linear(1, 1), 3

        def get_extra_state(self):
            return {'v': self.v}

        def set_extra_state(self, state):
            self.v = state['v']

    m = M()
    m.v = 7
    sd = m.state_dict()
    assert list(sd) == ['_extra_state', 'lin.weight', 'lin.bias']
    m2 = M()
    m2.load_state_dict(sd)
    assert m2.v == 7
    del sd['_extra_state']
    assert 'Missing key(s) in state_dict: "_extra_state". ' in \
        _raises(RuntimeError, lambda: m2.load_state_dict(sd))
    lin = nn.Linear(1, 1)
    sd = dict(lin.state_dict(), _extra_state=1)
    assert lin.load_state_dict(sd, strict=False).unexpected_keys == ['_extra_state']


@pytest.mark.parametrize('lazy,plain,args,kw', [
    ('LazyLinear', 'Linear', (2, 3), {}),
    ('LazyConv2d', 'Conv2d', (4, 6, 3), {'groups': 2}),
    ('LazyConvTranspose1d', 'ConvTranspose1d', (4, 6, 3), {'groups': 2}),
    ('LazyBatchNorm1d', 'BatchNorm1d', (5,), {}),
    ('LazyInstanceNorm2d', 'InstanceNorm2d', (5,), {'affine': True,
                                                    'track_running_stats': True}),
])
def test_lazy_module_loads_a_checkpoint(lazy, plain, args, kw):
    src = getattr(nn, plain)(*args, **kw)
    sd = src.state_dict()
    lazy_args = args[1:] if 'Norm' not in plain else ()
    m = getattr(nn, lazy)(*lazy_args, **kw)
    assert repr(m.load_state_dict(sd)) == '<All keys matched successfully>'
    got = m.state_dict()
    assert list(got) == list(sd)
    for k, v in sd.items():
        assert got[k].shape == v.shape and bool((got[k] == v).all())


def test_positional_state_dict_and_destination():
    m = nn.Linear(1, 1)
    with pytest.warns(UserWarning, match="Positional args"):
        assert list(m.state_dict(OrderedDict(), 'x.')) == ['x.weight', 'x.bias']
    d = {}
    assert m.state_dict(destination=d) is d


# ---- registration and attributes --------------------------------------------------------
def test_setattr_messages():
    m = nn.Linear(1, 1)
    assert _raises(TypeError, lambda: setattr(m, 'weight', tg.zeros(1, 1))) == \
        "cannot assign 'torch.FloatTensor' as parameter 'weight' " \
        "(torch.nn.Parameter or None expected)"
    bn = nn.BatchNorm1d(2)
    assert _raises(TypeError, lambda: setattr(bn, 'running_mean', 5)) == \
        "cannot assign 'int' as buffer 'running_mean' (torch.Tensor or None expected)"
    s = nn.Sequential(nn.Linear(1, 1))
    assert _raises(TypeError, lambda: setattr(s, '0', 5)) == \
        "cannot assign 'int' as child module '0' (torch.nn.Module or None expected)"
    assert _raises(TypeError, lambda: m.register_parameter('x', tg.zeros(1))) == \
        "cannot assign 'torch.FloatTensor' object to parameter 'x' " \
        "(torch.nn.Parameter or None required)"
    assert _raises(KeyError, lambda: m.register_parameter('a.b', None)) == \
        '\'parameter name can\\\'t contain "."\''
    assert _raises(TypeError, lambda: m.register_buffer('x', 5)) == \
        "cannot assign 'int' object to buffer 'x' (torch Tensor or None required)"


def test_assignments_before_init():
    class Plain(nn.Module):
        def __init__(self):
            self.x = 5  # a plain attribute is fine before __init__
            super().__init__()
    assert Plain().x == 5

    class Child(nn.Module):
        def __init__(self):
            self.lin = nn.Linear(1, 1)

    class Param(nn.Module):
        def __init__(self):
            self.p = nn.Parameter(tg.zeros(1))

    class Buffer(nn.Module):
        def __init__(self):
            self.register_buffer('b', None)

    assert _raises(AttributeError, Child) == \
        "cannot assign module before Module.__init__() call"
    assert _raises(AttributeError, Param) == \
        "cannot assign parameters before Module.__init__() call"
    assert _raises(AttributeError, Buffer) == \
        "cannot assign buffer before Module.__init__() call"


def test_buffer_made_persistent_again():
    m = nn.Linear(1, 1)
    m.register_buffer('b', tg.zeros(1), persistent=False)
    assert 'b' not in m.state_dict()
    m.register_buffer('b', tg.zeros(1))
    assert list(m.state_dict()) == ['weight', 'bias', 'b']


def test_named_modules_remove_duplicate():
    lin = nn.Linear(2, 2)
    s = nn.Sequential(lin, lin)
    assert [n for n, _ in s.named_modules()] == ['', '0']
    assert [n for n, _ in s.named_modules(remove_duplicate=False)] == ['', '0', '1']


def test_module_type_casts_every_tensor():
    bn = nn.BatchNorm1d(2).type(tg.float64)
    assert bn.weight.dtype == tg.float64 and bn.num_batches_tracked.dtype == tg.float64
    assert isinstance(bn.weight, nn.Parameter)


def test_to_refuses_integer_dtypes_with_pytorchs_words():
    assert _raises(TypeError, lambda: nn.Linear(1, 1).to(tg.int64)) == \
        "nn.Module.to only accepts floating point or complex dtypes, but got desired " \
        "dtype=tensorgraph.int64"


# ---- printing and containers -----------------------------------------------------------
def test_multi_line_extra_repr():
    class Leaf(nn.Module):
        def extra_repr(self):
            return 'a=1\nb=2'

    class WithChild(Leaf):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(1, 1)

    assert repr(Leaf()) == 'Leaf(\n  a=1\n  b=2\n)'
    assert repr(WithChild()) == ('WithChild(\n  a=1\n  b=2\n  (l): Linear(in_features=1, '
                                 'out_features=1, bias=True)\n)')


def test_parameter_containers_repr():
    pl = nn.ParameterList([nn.Parameter(tg.zeros(2, 3)), nn.Parameter(tg.zeros(2, dtype=tg.float64))])
    assert repr(pl) == ('ParameterList(\n    (0): Parameter containing: [tensorgraph.float32 of '
                        'size 2x3]\n    (1): Parameter containing: [tensorgraph.float64 of size '
                        '2]\n)')
    pd = nn.ParameterDict({'a': nn.Parameter(tg.zeros(2, 3))})
    assert repr(pd) == 'ParameterDict(  (a): Parameter containing: [torch.FloatTensor of size 2x3])'


def test_module_list_index_and_add():
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    assert _raises(IndexError, lambda: ml[5]) == 'index 5 is out of range'
    assert _raises(IndexError, lambda: ml.__setitem__(-3, nn.ReLU())) == 'index -3 is out of range'
    both = ml + nn.ModuleList([nn.ELU()])
    assert type(both) is nn.ModuleList and [type(m).__name__ for m in both] == \
        ['ReLU', 'Tanh', 'ELU']
    ml[-1] = nn.Sigmoid()
    assert [n for n, _ in ml.named_children()] == ['0', '1'] and isinstance(ml[1], nn.Sigmoid)


# ---- optimizers and schedulers -------------------------------------------------------------
def _params(n=2):
    return [nn.Parameter(tg.tensor(np.arange(4.).reshape(2, 2) + i)) for i in range(n)]


def test_optimizer_state_per_parameter():
    ps = _params()
    opt = tg.optim.Adam(ps, lr=0.1)
    assert type(opt.state).__name__ == 'defaultdict' and opt.state[ps[0]] == {}
    ps[0].grad = tg.ones(2, 2, dtype=tg.float64)
    opt.step()
    st = opt.state
    assert list(st) == [ps[0]] and list(st[ps[0]]) == ['step', 'exp_avg', 'exp_avg_sq']
    assert st[ps[0]]['step'].item() == 1.0


def test_state_key_order_nadam_asgd():
    for cls, keys in ((tg.optim.NAdam, ['step', 'mu_product', 'exp_avg', 'exp_avg_sq']),
                      (tg.optim.ASGD, ['step', 'eta', 'mu', 'ax'])):
        ps = _params(1)
        opt = cls(ps)
        ps[0].grad = tg.ones(2, 2, dtype=tg.float64)
        opt.step()
        assert list(opt.state_dict()['state'][0]) == keys
        again = cls(ps)
        again.load_state_dict(opt.state_dict())
        assert list(again.state_dict()['state'][0]) == keys


def test_param_group_checks():
    ps = _params(3)
    opt = tg.optim.SGD(ps[:1], lr=0.1)
    assert _raises(TypeError, lambda: opt.add_param_group({'params': set(ps[1:])})).startswith(
        'optimizer parameters need to be organized in ordered collections')
    assert _raises(AssertionError, lambda: opt.add_param_group(ps[1:])) == \
        'param group must be a dict'
    opt.add_param_group({'params': ps[1], 'lr': 0.5})  # one tensor stands for a list
    assert opt.param_groups[1]['params'] == [ps[1]]
    assert _raises(TypeError, lambda: tg.optim.SGD(tg.zeros(2, requires_grad=True), lr=0.1)) == \
        'params argument given to the optimizer should be an iterable of Tensors or dicts, ' \
        'but got torch.FloatTensor'


def test_load_state_dict_casts_to_parameter_dtype():
    for cls, kw in ((tg.optim.SGD, dict(lr=0.1, momentum=0.9)), (tg.optim.Adam, {}),
                    (tg.optim.NAdam, {})):
        ps = _params()
        opt = cls(ps, **kw)
        for p in ps:
            p.grad = p.detach() * 0.5 + 1
        opt.step()
        ps32 = [nn.Parameter(p.detach().float()) for p in ps]
        again = cls(ps32, **kw)
        again.load_state_dict(opt.state_dict())
        for entry in again.state_dict()['state'].values():
            for k, v in entry.items():
                if isinstance(v, tg.Tensor) and k != 'step':
                    assert v.dtype == tg.float32, (cls, k)


def test_scheduler_step_before_optimizer_step_warns():
    p = nn.Parameter(tg.zeros(2))
    opt = tg.optim.SGD([p], lr=0.1)
    sched = tg.optim.lr_scheduler.StepLR(opt, 1, 0.5)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        sched.step()
    assert [str(x.message)[:58] for x in w] == \
        ['Detected call of `lr_scheduler.step()` before `optimizer.s']
    opt2 = tg.optim.SGD([p], lr=0.1)
    sched2 = tg.optim.lr_scheduler.StepLR(opt2, 1, 0.5)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        opt2.step()
        sched2.step()
        opt2.step()
        sched2.step()
    assert not w and opt2.param_groups[0]['lr'] == 0.025


# ---- against PyTorch, where it does not raise ------------------------------------------------
@with_torch
def test_against_torch_state_dict_walk():
    def run(L):
        m = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.BatchNorm1d(3), L.nn.InstanceNorm1d(3))
        sd = m.state_dict()
        meta = dict(sd._metadata)
        del sd['1.num_batches_tracked']
        sd['3.x'] = L.zeros(1)
        r = m.load_state_dict(sd, strict=False)
        return list(sd), meta, r.missing_keys, r.unexpected_keys, repr(m)
    assert run(tg) == run(torch)


@with_torch
def test_against_torch_optimizer_state():
    def run(L):
        ps = [L.nn.Parameter(L.tensor(np.arange(4.).reshape(2, 2) + i)) for i in range(2)]
        opt = L.optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True)
        ps[1].grad = L.ones(2, 2, dtype=L.float64)
        opt.step()
        return {i: {k: np.asarray(v).tolist() for k, v in opt.state[p].items()}
                for i, p in enumerate(ps)}
    assert run(tg) == run(torch)


def test_overlapping_view_write_with_history_is_refused():
    """deliberately not PyTorch's: it cannot tell unfold's windows overlap and
    runs the write, whose values and gradient are then undefined"""
    x = tg.arange(8.0, requires_grad=True) * 1.0
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        x.unfold(0, 3, 1).add_(1.0)
    y = tg.arange(8.0)
    y.unfold(0, 3, 1).fill_(2.0)  # without history it runs
    assert y.tolist() == [2.0] * 8
