"""AdaptiveLogSoftmaxWithLoss as PyTorch's (Grave et al., "Efficient softmax
approximation for GPUs"): the classes below cutoffs[0] (the shortlist) are
scored by the head, which also gives one logit per tail cluster; the classes
of cluster i are scored by tail[i], a projection to in_features //
div_value**(i+1) features and then to the cluster's classes. A class's log
probability is the head's for its cluster plus the cluster's own.
Parameters, their shapes and the state_dict keys (head.weight,
tail.0.0.weight, tail.0.1.weight, ...) are PyTorch's."""
from collections import namedtuple

from .._ops import cat
from . import functional as F
from ._factory_kwargs import factory_kwargs
from .containers import ModuleList, Sequential
from .layers import Linear
from .module import Module

__all__ = ['AdaptiveLogSoftmaxWithLoss']

_ASMoutput = namedtuple('_ASMoutput', ['output', 'loss'])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        fk = factory_kwargs(device, dtype)
        cutoffs = list(cutoffs)
        # the checks in PyTorch's order: min() of no cutoffs raises its own ValueError
        if (sorted(cutoffs) != cutoffs or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **fk)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            classes = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **fk),
                                        Linear(hidden, classes, bias=False, **fk)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection in self.tail:
            for lin in projection:
                lin.reset_parameters()

    def forward(self, input_, target_):
        if target_.ndim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.ndim != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found "
                                   "inputs with size", input_.size())
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found "
                                   "inputs with size", input_.size())
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.ndim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch = target.size(0)

        output = input.new_zeros(batch)
        head_index = target          # the head's column each row reads
        bounds = [0] + self.cutoffs
        covered = 0
        for i in range(len(bounds) - 1):
            lo, hi = bounds[i], bounds[i + 1]
            mask = (target >= lo) & (target < hi)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            covered += rows.numel()
            if i == 0:
                continue             # the shortlist: the head's own column
            logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            within = (target[mask] - lo).unsqueeze(1)
            output = output.index_add(0, rows, logprob.gather(1, within).squeeze(1))
            head_index = head_index.masked_fill(mask, self.shortlist_size + i - 1)
        if covered != batch:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        """the log probabilities of all n_classes from the input and the
        head's output"""
        head_logprob = F.log_softmax(head_output, dim=1)
        columns = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            columns.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(columns, 1)

    def log_prob(self, input):
        """[N, in_features] -> the log probabilities [N, n_classes]"""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """log_prob(input).argmax(1), evaluating the tails only for the rows
        whose head's best is a cluster"""
        head_output = self.head(input)
        best = head_output.argmax(dim=1)
        outside = best >= self.shortlist_size
        if not outside.any().item():
            return best
        if outside.all().item():
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        full = self._get_full_log_prob(input[outside], head_output[outside])
        best[outside] = full.argmax(dim=1)
        return best
