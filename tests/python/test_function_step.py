"""A whole training step inside tg.function (zero_grad, backward and an
optimizer's step compiled into the graph, python/src/graph_step.c): the
same losses, parameters, gradients and optimizer state as eager steps,
bit for bit, and clear errors for what a compiled step cannot do."""
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F


def mlp(seed=0):
    tg.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(),
                         nn.Linear(8, 3))


def data(seed=1):
    tg.manual_seed(seed)
    return tg.randn(5, 6), tg.randint(0, 3, (5,))


def same(a, b):
    return a.shape == b.shape and bool((a == b).all())


def close(loss, eager_loss):
    """the loss of the compiled step is eager's, bit for bit"""
    return same(loss, eager_loss.detach())


def near(a, b, tol):
    return a.shape == b.shape and (same(a, b) if tol == 0 else
                                   bool(((a - b).abs() <= tol * (1 + b.abs())).all()))


def check_models(m1, m2, tol=0):
    for (n, p), q in zip(m1.named_parameters(), m2.parameters()):
        assert near(p, q, tol), n
        assert (p.grad is None) == (q.grad is None), n
        if p.grad is not None:
            assert near(p.grad, q.grad, tol), n


def train_step(model, opt, set_to_none=False):
    """the eager training step; tg.function(train_step(...)) compiles it"""
    def step(x, y):
        opt.zero_grad(set_to_none=set_to_none)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def run_both(compiled, eager, x, y, steps, between=None):
    """steps of both, the same loss at each; between(i) runs after step i"""
    for i in range(steps):
        a, b = compiled(x, y), eager(x, y)
        assert close(a, b), i
        assert not a.requires_grad  # the values before the update, no history
        if between:
            between(i)


OPTIMIZERS = [
    ("sgd", lambda ps: tg.optim.SGD(ps, lr=0.1)),
    ("sgd_momentum", lambda ps: tg.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-2)),
    ("sgd_nesterov", lambda ps: tg.optim.SGD(ps, lr=0.05, momentum=0.5, nesterov=True)),
    ("adam", lambda ps: tg.optim.Adam(ps, lr=1e-2)),
    ("adamw_amsgrad", lambda ps: tg.optim.AdamW(ps, lr=1e-2, amsgrad=True)),
    ("rmsprop", lambda ps: tg.optim.RMSprop(ps, lr=1e-2, momentum=0.5, centered=True)),
    ("adadelta", lambda ps: tg.optim.Adadelta(ps, lr=0.5)),
]


@pytest.mark.parametrize("name,make", OPTIMIZERS, ids=[n for n, _ in OPTIMIZERS])
def test_compiled_step_equals_eager(name, make):
    x, y = data()
    m1, m2 = mlp(), mlp()
    o1, o2 = make(m1.parameters()), make(m2.parameters())
    step = tg.function(train_step(m1, o1))
    run_both(step, train_step(m2, o2), x, y, 4)
    check_models(m1, m2)
    s1, s2 = o1.state_dict()['state'], o2.state_dict()['state']
    for k in s2:
        for key, v in s2[k].items():
            w = s1[k][key]
            assert same(w, v) if isinstance(v, tg.Tensor) else w == v, (k, key)
    assert step.trace_count == 1


def test_levels_and_plan_reuse():
    x, y = data()
    m1, m2 = mlp(), mlp()
    o1, o2 = tg.optim.Adam(m1.parameters(), lr=1e-2), tg.optim.Adam(m2.parameters(), lr=1e-2)
    step = tg.function(train_step(m1, o1))
    cf = step.get_concrete_function(x, y)
    cf.set_opt_level(2)
    run_both(step, train_step(m2, o2), x, y, 3)
    check_models(m1, m2)
    stats = cf.session_stats()
    assert stats['plan_misses'] == 1 and stats['runs'] == 3
    assert cf.has_step


def test_gradients_accumulate_across_calls():
    """without zero_grad in the function the gradients add up, as eagerly"""
    x, y = data()
    m1, m2 = mlp(), mlp()

    def backward_only(model):
        def f(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return loss
        return f
    compiled, eager = tg.function(backward_only(m1)), backward_only(m2)
    for i in range(3):
        compiled(x * (i + 1), y)
        eager(x * (i + 1), y)
        check_models(m1, m2)
    m1.zero_grad()
    m2.zero_grad()
    compiled(x, y)
    eager(x, y)
    check_models(m1, m2)
    assert compiled.trace_count == 1


def test_two_backwards_and_reading_grads():
    """two losses in one step, and p.grad read inside the function"""
    x, y = data()
    m1, m2 = mlp(), mlp()
    o1, o2 = tg.optim.SGD(m1.parameters(), lr=0.1), tg.optim.SGD(m2.parameters(), lr=0.1)

    def body(model, opt):
        def f(x, y):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            (model(x * 2).pow(2).mean()).backward()
            norm = sum((p.grad * p.grad).sum() for p in model.parameters())
            opt.step()
            return norm
        return f
    run_both(tg.function(body(m1, o1)), body(m2, o2), x, y, 3)
    check_models(m1, m2)


def sgd_pair(**kw):
    m1, m2 = mlp(), mlp()
    return m1, m2, tg.optim.SGD(m1.parameters(), **kw), tg.optim.SGD(m2.parameters(), **kw)


def test_scheduler_changes_lr_without_retrace():
    x, y = data()
    m1, m2, o1, o2 = sgd_pair(lr=0.2)
    s1 = tg.optim.lr_scheduler.StepLR(o1, step_size=1, gamma=0.5)
    s2 = tg.optim.lr_scheduler.StepLR(o2, step_size=1, gamma=0.5)
    step = tg.function(train_step(m1, o1))
    run_both(step, train_step(m2, o2), x, y, 4, lambda i: (s1.step(), s2.step()))
    check_models(m1, m2)
    assert step.trace_count == 1


def test_other_hyper_parameter_change_retraces():
    x, y = data()
    m1, m2, o1, o2 = sgd_pair(lr=0.1, momentum=0.9)

    def change(i):
        if i == 1:
            for o in (o1, o2):
                o.param_groups[0]['momentum'] = 0.5
    step = tg.function(train_step(m1, o1))
    run_both(step, train_step(m2, o2), x, y, 4, change)
    check_models(m1, m2)
    assert step.trace_count == 2


def test_grads_dropped_outside_retrace():
    """the compiled step writes into the .grad tensors it traced with;
    gradients set to None outside get them back (what the trace began
    with), one replaced by another tensor makes it trace again"""
    x, y = data()
    m1, m2, o1, o2 = sgd_pair(lr=0.1)
    step, eager = tg.function(train_step(m1, o1)), train_step(m2, o2)
    run_both(step, eager, x, y, 3,
             lambda i: (o1.zero_grad(set_to_none=True), o2.zero_grad(set_to_none=True)))
    check_models(m1, m2)
    assert step.trace_count == 1
    for m in (m1, m2):
        for p in m.parameters():
            p.grad = tg.zeros_like(p)
    run_both(step, eager, x, y, 1)
    check_models(m1, m2)
    assert step.trace_count == 2


def test_set_to_none_then_backward():
    x, y = data()
    m1, m2 = mlp(), mlp()
    o1, o2 = tg.optim.Adam(m1.parameters()), tg.optim.Adam(m2.parameters())
    for m in (m1, m2):  # gradients exist before the first call
        F.cross_entropy(m(x), y).backward()
    run_both(tg.function(train_step(m1, o1, True)), train_step(m2, o2, True), x, y, 3)
    check_models(m1, m2)


def test_frozen_and_unused_parameters():
    """a frozen parameter is not updated; one the loss does not reach keeps
    its gradient None and is skipped, as eagerly"""
    x, y = data()
    m1, m2 = mlp(), mlp()
    extra1, extra2 = nn.Parameter(tg.ones(3)), nn.Parameter(tg.ones(3))
    m1[0].weight.requires_grad_(False)
    m2[0].weight.requires_grad_(False)
    o1 = tg.optim.SGD(list(m1.parameters()) + [extra1], lr=0.1, weight_decay=0.1)
    o2 = tg.optim.SGD(list(m2.parameters()) + [extra2], lr=0.1, weight_decay=0.1)
    run_both(tg.function(train_step(m1, o1)), train_step(m2, o2), x, y, 3)
    check_models(m1, m2)
    assert extra1.grad is None and same(extra1, extra2)


def test_batch_norm_training_step():
    tg.manual_seed(3)
    x = tg.randn(4, 2, 5, 5)
    y = tg.randint(0, 3, (4,))

    def model(seed):
        tg.manual_seed(seed)
        return nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(),
                             nn.Linear(27, 3))
    m1, m2 = model(0), model(0)
    # SGD: the convolution's bias before batch norm has gradients of ~1e-8
    # (noise), which Adam would scale up to whole steps
    o1 = tg.optim.SGD(m1.parameters(), lr=0.1, momentum=0.9)
    o2 = tg.optim.SGD(m2.parameters(), lr=0.1, momentum=0.9)
    step, eager = tg.function(train_step(m1, o1)), train_step(m2, o2)
    for _ in range(3):
        assert abs(step(x, y).item() - eager(x, y).item()) < 1e-5
    # the graph's convolution gradients are summed in another order
    check_models(m1, m2, tol=1e-5)
    assert near(m1[1].running_mean, m2[1].running_mean, 1e-6)
    assert near(m1[1].running_var, m2[1].running_var, 1e-6)


def test_errors():
    x, y = data()
    m = mlp()

    opt = tg.optim.Adagrad(m.parameters())

    @tg.function
    def python_optimizer(x, y):
        F.cross_entropy(m(x), y).backward()
        opt.step()
        return x.sum()
    with pytest.raises(NotImplementedError, match="Adagrad.step.. inside tg.function"):
        python_optimizer(x, y)

    @tg.function
    def not_scalar(x):
        m(x).backward()
        return x.sum()
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        not_scalar(x)

    @tg.function
    def twice(x, y):
        F.cross_entropy(m(x), y).backward(create_graph=True)
        return x.sum()
    with pytest.raises(NotImplementedError, match="create_graph"):
        twice(x, y)

    xg = x.clone().requires_grad_()

    @tg.function
    def arg_grad(x, y):
        F.cross_entropy(m(x), y).backward()
        return y
    with pytest.raises(NotImplementedError, match="argument of the function requires grad"):
        arg_grad(xg, y)

    @tg.function
    def nothing_requires_grad(x):
        (x * 2).sum().backward()
        return x.sum()
    with pytest.raises(RuntimeError, match="does not require grad"):
        nothing_requires_grad(x)

    F.cross_entropy(m(x), y).backward()
    unused = nn.Parameter(tg.ones(2))
    unused.grad = tg.ones(2)
    sgd = tg.optim.SGD(list(m.parameters()) + [unused], lr=0.1)

    @tg.function
    def drops(x, y):
        sgd.zero_grad(set_to_none=True)
        F.cross_entropy(m(x), y).backward()
        sgd.step()
        return x.sum()
    with pytest.raises(NotImplementedError, match="set_to_none=True"):
        drops(x, y)


def test_explicit_gradient_argument():
    x, y = data()
    m1, m2 = mlp(), mlp()
    g = tg.randn(5, 3)

    @tg.function
    def back(x):
        m1(x).backward(g)
        return x.sum()
    back(x)
    m2(x).backward(g)
    check_models(m1, m2)
