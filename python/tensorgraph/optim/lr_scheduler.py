"""Learning-rate schedules with PyTorch's recurrences and float arithmetic
(the same operations in the same order, so the sequences are equal bit for
bit): they set each param group's 'lr' (and, for the cyclic ones, its
'momentum' or 'betas'), which the optimizer reads at its next step.
Each schedule's get_lr() is the chainable form (from the group's current
lr); _get_closed_form_lr() is used for step(epoch). ReduceLROnPlateau and
the schedules over other schedules are in lr_scheduler_extra.py."""
import math
import warnings
from bisect import bisect_right
from collections import Counter

_EPOCH_WARNING = ("The epoch parameter in `scheduler.step()` was not necessary and is being "
                  "deprecated where possible. Please use `scheduler.step()` to step the "
                  "scheduler.")


_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
    "value of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")
_OVERRIDDEN_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    "`lr_scheduler.step()`. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")


def _with_counter(method):
    """optimizer.step counting its calls in optimizer._step_count (what a
    scheduler's first step checks, as PyTorch's); wrapped once"""
    if getattr(method, '_with_counter', False) or not hasattr(method, '__self__'):
        return method
    import functools
    import weakref
    ref, func = weakref.ref(method.__self__), method.__func__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        instance = ref()
        instance._step_count += 1
        return func.__get__(instance, type(instance))(*args, **kwargs)

    wrapper._with_counter = True
    return wrapper


class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1, verbose=False):
        if not hasattr(optimizer, 'param_groups'):
            raise TypeError(f'{type(optimizer).__name__} is not an Optimizer')
        self.optimizer = optimizer
        if last_epoch == -1:
            for g in optimizer.param_groups:
                g.setdefault('initial_lr', g['lr'])
        else:
            for i, g in enumerate(optimizer.param_groups):
                if 'initial_lr' not in g:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming an optimizer")
        self.base_lrs = [g['initial_lr'] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        optimizer.step = _with_counter(optimizer.step)
        self.verbose = verbose
        self._initial_step()

    def _initial_step(self):
        self.optimizer._step_count = 0
        self._step_count = 0
        self.step()

    def get_last_lr(self):
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def _group_lrs(self):
        return [g['lr'] for g in self.optimizer.param_groups]

    def print_lr(self, is_verbose, group, lr, epoch=None):
        if is_verbose:
            print(f'Adjusting learning rate of group {group} to {lr:.4e}.')

    def step(self, epoch=None):
        if self._step_count == 1:  # the first step after the constructor's
            if not getattr(self.optimizer.step, '_with_counter', False):
                warnings.warn(_OVERRIDDEN_WARNING, UserWarning)
            elif self.optimizer._step_count < 1:
                warnings.warn(_ORDER_WARNING, UserWarning)
        if epoch is not None:
            warnings.warn(_EPOCH_WARNING, UserWarning)
        self._step(epoch)

    def _step(self, epoch):
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:  # jump: the closed form where there is one, as PyTorch
            self.last_epoch = epoch
            closed = getattr(self, '_get_closed_form_lr', None)
            values = closed() if closed else self.get_lr()
        for i, (g, lr) in enumerate(zip(self.optimizer.param_groups, values)):
            g['lr'] = lr
            self.print_lr(self.verbose, i, lr, epoch)
        self._last_lr = self._group_lrs()

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != 'optimizer'}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


_LRScheduler = LRScheduler  # PyTorch 1.13's name


def _per_group(optimizer, name, value):
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"expected {len(optimizer.param_groups)} values for {name}, "
                             f"got {len(value)}")
        return list(value)
    return [value] * len(optimizer.param_groups)


class _LambdaScheduler(LRScheduler):
    """LambdaLR and MultiplicativeLR: one function per group; state_dict
    keeps the __dict__ of callable objects, not plain functions (as PyTorch)"""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch, verbose)

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ('optimizer', 'lr_lambdas')}
        state['lr_lambdas'] = [None if _is_function(fn) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        lambdas = state.pop('lr_lambdas')
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


def _is_function(fn):
    return type(fn).__name__ == 'function'


class LambdaLR(_LambdaScheduler):
    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    def get_lr(self):
        if self.last_epoch > 0:
            return [g['lr'] * fn(self.last_epoch)
                    for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]
        return self._group_lrs()


class StepLR(LRScheduler):
    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        self.milestones = Counter(milestones)  # a repeated milestone decays that many times
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        ms = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(ms, self.last_epoch) for base in self.base_lrs]


class ConstantLR(LRScheduler):
    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1, verbose=False):
        if factor > 1.0 or factor < 0:
            raise ValueError('Constant multiplicative factor expected to be between 0 and 1.')
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._group_lrs()]
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return [lr * (1.0 / self.factor) for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1, verbose=False):
        if start_factor > 1.0 or start_factor < 0:
            raise ValueError('Starting multiplicative factor expected to be between 0 and 1.')
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError('Ending multiplicative factor expected to be between 0 and 1.')
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._group_lrs()]
        if self.last_epoch > self.total_iters:
            return self._group_lrs()
        # the ratio of this epoch's factor to the previous one's
        d = self.end_factor - self.start_factor
        ratio = 1. + d / (self.total_iters * self.start_factor + (self.last_epoch - 1) * d)
        return [lr * ratio for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        d = self.end_factor - self.start_factor
        return [base * (self.start_factor + d * min(self.total_iters, self.last_epoch)
                        / self.total_iters) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch == 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1, verbose=False):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        e, n = self.last_epoch, self.total_iters
        if e == 0 or e > n:
            return self._group_lrs()
        decay = ((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power
        return [lr * decay for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer, T_max, eta_min=0, last_epoch=-1, verbose=False):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        if e == 0:
            return self._group_lrs()
        if self._step_count == 1 and e > 0:  # resumed: start from the closed form
            return [lo + (base - lo) * (1 + math.cos(e * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [g['lr'] + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, g in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
                * (lr - lo) + lo for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        lo = self.eta_min
        return [lo + (base - lo) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0, last_epoch=-1, verbose=False):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0 = self.T_i = T_0
        self.T_mult, self.eta_min = T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        lo = self.eta_min
        return [lo + (base - lo) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None):
        """step() moves one epoch; step(epoch) may be fractional (per batch)"""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:  # which restart epoch falls in: T_0 (m^n - 1) / (m - 1) <= epoch
                m = self.T_mult
                n = int(math.log((epoch / self.T_0 * (m - 1) + 1), m))
                self.T_cur = epoch - self.T_0 * (m ** n - 1) / (m - 1)
                self.T_i = self.T_0 * m ** n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        for i, (g, lr) in enumerate(zip(self.optimizer.param_groups, self.get_lr())):
            g['lr'] = lr
            self.print_lr(self.verbose, i, lr, epoch)
        self._last_lr = self._group_lrs()


class CyclicLR(LRScheduler):
    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode='triangular', gamma=1.0, scale_fn=None, scale_mode='cycle',
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1,
                 verbose=False):
        if not hasattr(optimizer, 'param_groups'):
            raise TypeError(f'{type(optimizer).__name__} is not an Optimizer')
        self.optimizer = optimizer
        base_lrs = _per_group(optimizer, 'base_lr', base_lr)
        if last_epoch == -1:
            for lr, g in zip(base_lrs, optimizer.param_groups):
                g['lr'] = lr
        self.max_lrs = _per_group(optimizer, 'max_lr', max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ('triangular', 'triangular2', 'exp_range') and scale_fn is None:
            raise ValueError('mode is invalid and scale_fn is None')
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        if scale_fn is None:
            self.scale_mode = 'iterations' if mode == 'exp_range' else 'cycle'
        else:
            self.scale_mode = scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if 'momentum' not in optimizer.defaults:
                raise ValueError('optimizer must support momentum with `cycle_momentum` option '
                                 'enabled')
            base_momentums = _per_group(optimizer, 'base_momentum', base_momentum)
            if last_epoch == -1:
                for m, g in zip(base_momentums, optimizer.param_groups):
                    g['momentum'] = m
            self.base_momentums = [g['momentum'] for g in optimizer.param_groups]
            self.max_momentums = _per_group(optimizer, 'max_momentum', max_momentum)
        super().__init__(optimizer, last_epoch, verbose)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == 'triangular':
            return 1.
        if self.mode == 'triangular2':
            return 1 / (2. ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1. + self.last_epoch / self.total_size - cycle  # position in the cycle, [0, 1)
        if x <= self.step_ratio:
            frac = x / self.step_ratio
        else:
            frac = (x - 1) / (self.step_ratio - 1)
        s = self.scale_fn(cycle if self.scale_mode == 'cycle' else self.last_epoch)
        lrs = [base + (top - base) * frac * s for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for g, lo, hi in zip(self.optimizer.param_groups, self.base_momentums,
                                 self.max_momentums):
                g['momentum'] = hi - (hi - lo) * frac * s
        return lrs

    def state_dict(self):
        state = super().state_dict()
        state.pop('_scale_fn_custom', None)  # a callable is not state (PyTorch 2 drops it too)
        return state


class OneCycleLR(LRScheduler):
    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy='cos', cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25., final_div_factor=1e4, three_phase=False,
                 last_epoch=-1, verbose=False):
        if not hasattr(optimizer, 'param_groups'):
            raise TypeError(f'{type(optimizer).__name__} is not an Optimizer')
        self.optimizer = optimizer
        if total_steps is None and epochs is None and steps_per_epoch is None:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        else:
            if epochs is None or epochs <= 0 or not isinstance(epochs, int):
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if (steps_per_epoch is None or steps_per_epoch <= 0
                    or not isinstance(steps_per_epoch, int)):
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        n = self.total_steps
        # (end step, start lr key, end lr key, start momentum key, end momentum key)
        if three_phase:
            self._schedule_phases = [
                (float(pct_start * n) - 1, 'initial_lr', 'max_lr', 'max_momentum',
                 'base_momentum'),
                (float(2 * pct_start * n) - 2, 'max_lr', 'initial_lr', 'base_momentum',
                 'max_momentum'),
                (n - 1, 'initial_lr', 'min_lr', 'max_momentum', 'max_momentum')]
        else:
            self._schedule_phases = [
                (float(pct_start * n) - 1, 'initial_lr', 'max_lr', 'max_momentum',
                 'base_momentum'),
                (n - 1, 'max_lr', 'min_lr', 'base_momentum', 'max_momentum')]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ('cos', 'linear'):
            raise ValueError("anneal_strategy must by one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        max_lrs = _per_group(optimizer, 'max_lr', max_lr)
        if last_epoch == -1:
            for top, g in zip(max_lrs, optimizer.param_groups):
                g['initial_lr'] = top / div_factor
                g['max_lr'] = top
                g['min_lr'] = g['initial_lr'] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if 'momentum' not in optimizer.defaults and 'betas' not in optimizer.defaults:
                raise ValueError('optimizer must support momentum with `cycle_momentum` option '
                                 'enabled')
            self.use_beta1 = 'betas' in optimizer.defaults
            tops = _per_group(optimizer, 'max_momentum', max_momentum)
            bases = _per_group(optimizer, 'base_momentum', base_momentum)
            if last_epoch == -1:
                for top, base, g in zip(tops, bases, optimizer.param_groups):
                    if self.use_beta1:
                        g['betas'] = (top, *g['betas'][1:])
                    else:
                        g['momentum'] = top
                    g['max_momentum'], g['base_momentum'] = top, base
        super().__init__(optimizer, last_epoch, verbose)

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == 'cos':
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step + 1} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        for g in self.optimizer.param_groups:
            start = 0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self._schedule_phases):
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(g[lr0], g[lr1], pct)
                    if self.cycle_momentum:
                        m = self._anneal(g[m0], g[m1], pct)
                    break
                start = end
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    g['betas'] = (m, *g['betas'][1:])
                else:
                    g['momentum'] = m
        return lrs


from .lr_scheduler_extra import (ChainedScheduler, ReduceLROnPlateau,  # noqa: E402,F401
                                 SequentialLR)
