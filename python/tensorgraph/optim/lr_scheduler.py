"""Learning-rate schedules with PyTorch's (chainable) recurrences: they
set each param group's 'lr', which the optimizer reads at its next step."""
import math


class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        for g in optimizer.param_groups:
            g.setdefault('initial_lr', g['lr'])
        self.base_lrs = [g['initial_lr'] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def get_last_lr(self):
        return self._last_lr

    def step(self):
        self.last_epoch += 1
        lrs = self.get_lr() if self.last_epoch > 0 else [g['lr'] for g in
                                                         self.optimizer.param_groups]
        for g, lr in zip(self.optimizer.param_groups, lrs):
            g['lr'] = lr
        self._last_lr = [g['lr'] for g in self.optimizer.param_groups]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != 'optimizer'}

    def load_state_dict(self, state):
        self.__dict__.update(state)


class StepLR(LRScheduler):
    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch % self.step_size:
            return [g['lr'] for g in self.optimizer.param_groups]
        return [g['lr'] * self.gamma for g in self.optimizer.param_groups]


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, T = self.last_epoch, self.T_max
        out = []
        for base, g in zip(self.base_lrs, self.optimizer.param_groups):
            if (e - 1 - T) % (2 * T) == 0:
                out.append(g['lr'] + (base - self.eta_min) * (1 - math.cos(math.pi / T)) / 2)
            else:
                out.append((1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
                           * (g['lr'] - self.eta_min) + self.eta_min)
        return out
