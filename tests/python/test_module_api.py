"""Module and serialization behaviours as PyTorch's: forward pre-hooks,
a replaced parameter keeping its place, tg.save/tg.load on file objects."""
import io

import pytest

import tensorgraph as tg


def test_forward_pre_hook_replaces_args_and_removes():
    m = tg.nn.Linear(2, 2)
    seen = []
    h = m.register_forward_pre_hook(lambda mod, args: seen.append(args[0].shape) or (args[0] * 0,))
    assert m(tg.ones(1, 2)).tolist() == m.bias.reshape(1, 2).tolist()
    h.remove()
    assert m(tg.ones(3, 2)).shape == (3, 2) and seen == [(1, 2)]
    # a single returned value stands for the one argument
    m.register_forward_pre_hook(lambda mod, args: args[0] * 2)
    x = tg.ones(1, 2)
    want = tg.nn.functional.linear(x * 2, m.weight, m.bias)
    assert m(x).tolist() == want.tolist()


def test_pre_hook_runs_before_forward_hook():
    order = []
    m = tg.nn.ReLU()
    m.register_forward_hook(lambda mod, args, out: order.append('post'))
    m.register_forward_pre_hook(lambda mod, args: order.append('pre'))
    m(tg.ones(1))
    assert order == ['pre', 'post']


def test_replaced_parameter_and_module_keep_their_place():
    m = tg.nn.Linear(2, 2)
    m.weight = tg.nn.Parameter(tg.ones(2, 2))
    assert [n for n, _ in m.named_parameters()] == ['weight', 'bias']
    s = tg.nn.Sequential(tg.nn.Linear(2, 2), tg.nn.ReLU())
    new = tg.nn.Linear(2, 2)
    s[0] = new
    assert [n for n, _ in s.named_children()] == ['0', '1'] and s[0] is new
    s[-1] = tg.nn.Tanh()
    assert isinstance(s[1], tg.nn.Tanh)
    with pytest.raises(IndexError):
        s[2] = tg.nn.ReLU()
    s.append(tg.nn.ReLU())
    del s[0]
    assert [type(m).__name__ for m in s] == ['Tanh', 'ReLU']
    assert [n for n, _ in s.named_children()] == ['0', '1']


def test_save_load_file_objects():
    buf = io.BytesIO()
    tg.save({'a': tg.ones(2), 'b': [1, 2], 'n': {'w': tg.zeros(1, 3)}}, buf)
    buf.seek(0)
    d = tg.load(buf)
    assert d['a'].tolist() == [1.0, 1.0] and d['b'] == [1, 2]
    assert d['n']['w'].shape == (1, 3)  # the structure comes back
    one = io.BytesIO()
    tg.save(tg.arange(3), one)
    assert tg.load(io.BytesIO(one.getvalue())).tolist() == [0, 1, 2]
    with pytest.raises(OSError, match="header"):  # as for a path
        tg.load(io.BytesIO(b'not a safetensors file'))


def test_checkpoint_structure_round_trip(tmp_path):
    m = tg.nn.Linear(2, 3)
    opt = tg.optim.Adam(m.parameters(), betas=(0.8, 0.9))
    m(tg.ones(1, 2)).sum().backward()
    opt.step()
    ck = {'model': m.state_dict(), 'optimizer': opt.state_dict(), 'epoch': 3,
          'hist': [1.5, 2.0], 'pair': (tg.ones(1), 'x'), 7: 'int key'}
    path = str(tmp_path / 'ck.pt')
    tg.save(ck, path)
    back = tg.load(path)
    assert list(back) == ['model', 'optimizer', 'epoch', 'hist', 'pair', 7]
    assert list(back['model']) == ['weight', 'bias'] and back['epoch'] == 3
    assert back['hist'] == [1.5, 2.0] and back['pair'][1] == 'x' and isinstance(back['pair'], tuple)
    assert list(back['optimizer']['state']) == [0, 1]
    assert back['optimizer']['param_groups'][0]['betas'] == (0.8, 0.9)
    opt2 = tg.optim.Adam(m.parameters())
    opt2.load_state_dict(back['optimizer'])
    assert opt2.param_groups[0]['betas'] == (0.8, 0.9)
    # a flat state_dict stays flat (its keys hold dots)
    tg.save(m.state_dict(), path)
    assert list(tg.load(path)) == ['weight', 'bias']


def test_sequential_slice_keeps_names_as_pytorch():
    s = tg.nn.Sequential(tg.nn.Linear(2, 3), tg.nn.ReLU(), tg.nn.Tanh())
    t = s[1:]
    assert type(t) is tg.nn.Sequential and list(t._modules) == ['1', '2']
    assert "(1): ReLU()" in repr(t) and "(2): Tanh()" in repr(t)
    assert t[0] is s[1] and s[-1] is s[2] and len(s[0:0]) == 0
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]


def test_half_and_bfloat16_are_refused_by_name():
    """no float16 or bfloat16 dtype: a TypeError that says so, not an
    AttributeError"""
    for cast in ("half", "bfloat16"):
        with pytest.raises(TypeError, match=f"Linear.{cast}\\(\\): tensorgraph has no"):
            getattr(tg.nn.Linear(2, 2), cast)()
