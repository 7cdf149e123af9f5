"""The CPU-only answers of PyTorch's device APIs: tg.cuda, tg.backends,
Tensor.device as a device, .cuda() refused, use_deterministic_algorithms."""
import pytest

import tensorgraph as tg
from conftest import SANITIZED, torch


def test_cuda_queries_and_device_choice():
    assert tg.cuda.is_available() is False and tg.cuda.device_count() == 0
    tg.cuda.manual_seed_all(0)  # a no-op, as PyTorch's without CUDA
    tg.cuda.manual_seed(0)
    d = tg.device('cuda' if tg.cuda.is_available() else 'cpu')
    x = tg.ones(2).to(d)
    assert isinstance(x.device, tg.device) and x.device.type == 'cpu'
    assert x.device == 'cpu' and x.device == d and str(x.device) == 'cpu'
    assert repr(x.device) == "device(type='cpu')"
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        x.cuda()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        tg.nn.Linear(1, 1).cuda()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        tg.cuda.synchronize()
    # PyTorch's error paths abort under the sanitizers' preloaded runtime
    if torch is not None and not SANITIZED and not torch.cuda.is_available():
        with pytest.raises(AssertionError):
            torch.ones(1).cuda()
        assert str(torch.ones(1).device) == str(x.device)


def test_backends_and_determinism_switches():
    assert tg.backends.cudnn.is_available() is False and tg.backends.mps.is_available() is False
    tg.backends.cudnn.benchmark = True
    tg.backends.cudnn.deterministic = True
    assert tg.backends.cudnn.benchmark and tg.backends.cudnn.deterministic
    tg.backends.cudnn.benchmark = tg.backends.cudnn.deterministic = False
    assert tg.are_deterministic_algorithms_enabled() is False
    tg.use_deterministic_algorithms(True)
    try:
        assert tg.are_deterministic_algorithms_enabled() is True
    finally:
        tg.use_deterministic_algorithms(False)
    with pytest.raises(TypeError, match="must be bool"):
        tg.use_deterministic_algorithms(1)


def test_amp_without_cuda_is_disabled_as_pytorch():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        ctx = tg.cuda.amp.autocast()
    with ctx:
        assert tg.is_autocast_enabled() is False
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = tg.cuda.amp.GradScaler()
    assert scaler.is_enabled() is False and scaler.get_scale() == 1.0
    w = tg.nn.Parameter(tg.ones(1))
    opt = tg.optim.SGD([w], lr=0.1)
    loss = (w * 2).sum()
    assert scaler.scale(loss) is loss
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == pytest.approx([0.8])
    with tg.autocast('cpu', enabled=False):
        assert not tg.is_autocast_enabled()
    with pytest.raises(NotImplementedError, match="bfloat16"):
        tg.autocast('cpu')
    if torch is not None and not SANITIZED and not torch.cuda.is_available():
        with pytest.warns(UserWarning):
            s = torch.cuda.amp.GradScaler()
        assert s.is_enabled() == scaler.is_enabled()
