"""What printing or iterating an optimizer's param_groups and state_dict
shows, and nn.init's helpers, as PyTorch 1.13 has them: the group keys in
PyTorch's order, calculate_gain's int for the unit gains, and the private
fan helpers custom initializers call."""
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

NAMES = ['SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adadelta', 'Adamax', 'NAdam', 'RAdam',
         'ASGD', 'Rprop']


@needs_torch
@pytest.mark.parametrize('name', NAMES)
def test_param_group_keys_in_torch_order(name):
    def keys(L):
        opt = getattr(L.optim, name)(L.nn.Linear(2, 2).parameters(), lr=0.1)
        return list(opt.param_groups[0]), list(opt.state_dict()['param_groups'][0])
    assert keys(tg) == keys(torch)


def test_init_helpers():
    assert tg.nn.init.calculate_gain('sigmoid') == 1
    assert isinstance(tg.nn.init.calculate_gain('conv2d'), int)
    assert tg.nn.init._calculate_fan_in_and_fan_out(tg.ones(4, 3, 2, 2)) == (12, 16)
    assert tg.nn.init._calculate_correct_fan(tg.ones(3, 4), 'fan_out') == 3
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        tg.nn.init._calculate_fan_in_and_fan_out(tg.ones(3))
    with pytest.raises(ValueError, match="not supported"):
        tg.nn.init._calculate_correct_fan(tg.ones(3, 4), 'fan_avg')
