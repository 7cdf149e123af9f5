"""optim.swa_utils, as PyTorch 1.13's: AveragedModel (a copy of a model
whose parameters, and optionally buffers, are running averages of the
model's: equal weights by default, or avg_fn), SWALR (anneals each
group's lr to swa_lr over anneal_epochs, cos or linear) and update_bn
(recomputes batch-norm statistics with a pass over the data)."""
import copy
import itertools
import math

from .._creation import ones_like, tensor, zeros_like
from .._grad_mode import no_grad
from ..nn.layers import _BatchNorm
from ..nn.module import Module
from .lr_scheduler import LRScheduler

__all__ = ['AveragedModel', 'SWALR', 'update_bn']


def _equal_average(averaged_param, model_param, num_averaged):
    return averaged_param + (model_param - averaged_param) / (num_averaged + 1)


class AveragedModel(Module):
    def __init__(self, model, device=None, avg_fn=None, use_buffers=False):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.register_buffer('n_averaged', tensor(0))
        self.avg_fn = avg_fn if avg_fn is not None else _equal_average
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """one more model in the averages (the first one is copied)"""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        with no_grad():
            first = int(self.n_averaged) == 0
            for p_swa, p_model in zip(mine, theirs):
                value = p_model.detach()
                if not first:
                    value = self.avg_fn(p_swa.detach(), value, self.n_averaged)
                p_swa.copy_(value.to(p_swa.dtype))
            self.n_averaged.add_(1)


def update_bn(loader, model, device=None):
    """the batch norms' running statistics recomputed from the data (a
    cumulative average over the loader's batches); the model's train/eval
    mode and momenta are restored"""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = zeros_like(module.running_mean)
            module.running_var = ones_like(module.running_var)
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
        with no_grad():
            module.num_batches_tracked.mul_(0)
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """each group's lr moves from its value to swa_lr over anneal_epochs
    steps (cos or linear), then stays there"""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy='cos',
                 last_epoch=-1):
        swa_lrs = self._format_param(optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group['swa_lr'] = lr
        if anneal_strategy not in ('cos', 'linear'):
            raise ValueError("anneal_strategy must by one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == 'cos' \
            else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _format_param(optimizer, swa_lrs):
        if isinstance(swa_lrs, (list, tuple)):
            if len(swa_lrs) != len(optimizer.param_groups):
                raise ValueError("swa_lr must have the same length as optimizer.param_groups: "
                                 f"swa_lr has {len(swa_lrs)}, optimizer.param_groups has "
                                 f"{len(optimizer.param_groups)}")
            return list(swa_lrs)
        return [swa_lrs] * len(optimizer.param_groups)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        # the lr before annealing, recovered from the group's current one
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group['lr'], group['swa_lr'], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group['swa_lr'] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]
