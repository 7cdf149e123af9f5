"""The schedules that are not a function of the epoch alone:
ReduceLROnPlateau (driven by a metric) and the two that drive other
schedulers, SequentialLR and ChainedScheduler; PyTorch's rules and
state_dict layouts."""
import warnings
from bisect import bisect_right
from math import inf


class ReduceLROnPlateau:
    def __init__(self, optimizer, mode='min', factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode='rel', cooldown=0, min_lr=0, eps=1e-8, verbose=False):
        if factor >= 1.0:
            raise ValueError('Factor should be < 1.0.')
        if not hasattr(optimizer, 'param_groups'):
            raise TypeError(f'{type(optimizer).__name__} is not an Optimizer')
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience, self.verbose, self.cooldown = patience, verbose, cooldown
        self.cooldown_counter = 0
        self.eps = eps
        self.last_epoch = 0
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()
        self._last_lr = [g['lr'] for g in optimizer.param_groups]

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ('min', 'max'):
            raise ValueError('mode ' + mode + ' is unknown!')
        if threshold_mode not in ('rel', 'abs'):
            raise ValueError('threshold mode ' + threshold_mode + ' is unknown!')
        self.mode_worse = inf if mode == 'min' else -inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        if self.mode == 'min':
            if self.threshold_mode == 'rel':
                return a < best * (1. - self.threshold)
            return a < best - self.threshold
        if self.threshold_mode == 'rel':
            return a > best * (self.threshold + 1.)
        return a > best + self.threshold

    def step(self, metrics, epoch=None):
        current = float(metrics)  # a 0-d tensor too
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is "
                          "being deprecated where possible.", UserWarning)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g['lr'] for g in self.optimizer.param_groups]

    def _reduce_lr(self, epoch):
        for i, g in enumerate(self.optimizer.param_groups):
            old = float(g['lr'])
            new = max(old * self.factor, self.min_lrs[i])
            if old - new > self.eps:  # changes smaller than eps are skipped
                g['lr'] = new
                if self.verbose:
                    print(f'Epoch {epoch}: reducing learning rate of group {i} to {new:.4e}.')

    def get_last_lr(self):
        return self._last_lr

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != 'optimizer'}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


class _OverSchedulers:
    """state_dict/load_state_dict for schedulers that hold schedulers:
    theirs nested under '_schedulers'"""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ('optimizer', '_schedulers')}
        state['_schedulers'] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        inner = state.pop('_schedulers')
        self.__dict__.update(state)
        for s, saved in zip(self._schedulers, inner):
            s.load_state_dict(saved)

    def get_last_lr(self):
        return self._last_lr


class SequentialLR(_OverSchedulers):
    """schedulers[i] runs from milestones[i - 1]; at a milestone the next
    one restarts from its epoch 0 (its closed form)"""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1, verbose=False):
        for i, s in enumerate(schedulers):
            if s.optimizer is not optimizer:
                raise ValueError("Sequential Schedulers expects all schedulers to belong to the "
                                 f"same optimizer, but got schedulers at index {i} to be "
                                 "different than the optimizer passed in.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for g in optimizer.param_groups:  # undo what the schedulers' constructors did
            g['lr'] = g['initial_lr']
        for s in self._schedulers:
            s.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        s = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            with warnings.catch_warnings():  # step(0) is deliberate here
                warnings.simplefilter('ignore', UserWarning)
                s.step(0)
        else:
            s.step()
        self._last_lr = s.get_last_lr()


class ChainedScheduler(_OverSchedulers):
    """steps every scheduler at each step: their factors multiply"""

    def __init__(self, schedulers):
        for i in range(1, len(schedulers)):
            if schedulers[i].optimizer is not schedulers[0].optimizer:
                raise ValueError("ChainedScheduler expects all schedulers to belong to the same "
                                 f"optimizer, but got schedulers at index 0 and {i} to be "
                                 "different")
        self._schedulers = list(schedulers)
        self.optimizer = schedulers[0].optimizer
        self._last_lr = [g['lr'] for g in self.optimizer.param_groups]

    def step(self):
        for s in self._schedulers:
            s.step()
        self._last_lr = [g['lr'] for g in self.optimizer.param_groups]
