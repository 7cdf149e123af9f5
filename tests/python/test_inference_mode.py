"""Inference tensors (torch.inference_mode): made inside, and views of
them; outside, no in-place write, no requires_grad, no saving by an op
autograd records; clones are normal tensors."""
import pytest

import tensorgraph as tg
from conftest import torch, needs_torch, SANITIZED


def _made_inside(lib):
    with lib.inference_mode():
        t = lib.ones(3) * 2
        t.add_(1)  # writes inside are fine
        inside = (t.is_inference(), lib.is_inference_mode_enabled(), t.requires_grad)
    return t, inside


def test_tensors_made_inside_are_inference_tensors():
    t, inside = _made_inside(tg)
    assert inside == (True, True, False)
    assert t.is_inference() and t[:2].is_inference() and t.view(3, 1).is_inference()
    assert not tg.ones(2).is_inference() and not tg.is_inference_mode_enabled()
    assert not t.clone().is_inference() and not (t * 3).is_inference()
    with tg.inference_mode(False):
        assert not tg.ones(1).is_inference() and tg.is_grad_enabled()


@pytest.mark.parametrize('write', [lambda t: t.add_(1), lambda t: t.fill_(0),
                                   lambda t: t.zero_(), lambda t: t.__setitem__(0, 5.0),
                                   lambda t: t[:2].mul_(2)])
def test_no_inplace_write_outside(write):
    t, _ = _made_inside(tg)
    with pytest.raises(RuntimeError, match='Inplace update to inference tensor outside'):
        write(t)
    assert t.tolist() == [3.0, 3.0, 3.0]


def test_no_requires_grad_and_no_saving_outside():
    t, _ = _made_inside(tg)
    w = tg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match='Setting requires_grad=True on inference tensor'):
        t.requires_grad_()
    with pytest.raises(RuntimeError, match='Inference tensors cannot be saved for backward'):
        t * w
    s = (t + w).sum()  # add saves neither input: recorded
    s.backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
    (t.clone() * w).sum().backward()
    assert w.grad.tolist() == [4.0, 4.0, 4.0]
    with tg.no_grad():
        assert (t * w).tolist() == [3.0, 3.0, 3.0]


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="PyTorch's refusals are C++ exceptions (abort under ASan)")
def test_pytorch_agrees():
    for lib in (torch, tg):
        t, inside = _made_inside(lib)
        w = lib.ones(3, requires_grad=True)
        assert inside == (True, True, False)
        outcomes = []
        for f in (lambda: t.add_(1), lambda: t.requires_grad_(), lambda: t * w,
                  lambda: t + w, lambda: t.exp() * w):
            try:
                f()
                outcomes.append('ok')
            except RuntimeError as e:
                outcomes.append(str(e)[:40])
        if lib is torch:
            want = outcomes
    assert outcomes == want
