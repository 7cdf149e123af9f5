"""Recurrent layers: RNN, LSTM, GRU (multi-layer, batch_first,
bidirectional, dropout between layers) and their cells, over existing ops.
PyTorch's parameter names (weight_ih_l0, bias_hh_l1_reverse, ...), shapes,
gate orders (LSTM i f g o, GRU r z n) and initialisation
(U(-1/sqrt(hidden), 1/sqrt(hidden))), so state_dicts load both ways.

Per layer and direction the input projection of every time step is one
matmul; the recurrence then runs step by step (h @ W_hh^T per step)."""
import math

from .. import _C
from .._creation import _dt, arange, tensor, zeros
from . import init
from ._factory_kwargs import factory_kwargs
from .module import Module
from .parameter import Parameter

_GATES = {'RNN_TANH': 1, 'RNN_RELU': 1, 'LSTM': 4, 'GRU': 3}


def _rnn_step(mode, gi, h, w_hh, b_hh):
    """one step of a plain RNN from the input projection gi"""
    gh = _C.matmul(h, w_hh.t())
    if b_hh is not None:
        gh = gh + b_hh
    return (_C.tanh if mode == 'RNN_TANH' else _C.relu)(gi + gh)


def _lstm_step(gi, h, c, w_hh, b_hh, w_hr=None):
    """one LSTM step; with w_hr (proj_size) the new h is projected down"""
    g = gi + _C.matmul(h, w_hh.t())
    if b_hh is not None:
        g = g + b_hh
    i, f, gg, o = g.chunk(4, -1)
    c = _C.sigmoid(f) * c + _C.sigmoid(i) * _C.tanh(gg)
    h = _C.sigmoid(o) * _C.tanh(c)
    return (h if w_hr is None else _C.matmul(h, w_hr.t())), c


def _gru_step(gi, h, w_hh, b_hh):
    gh = _C.matmul(h, w_hh.t())
    if b_hh is not None:
        gh = gh + b_hh
    ir, iz, in_ = gi.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = _C.sigmoid(ir + hr)
    z = _C.sigmoid(iz + hz)
    n = _C.tanh(in_ + r * hn)
    return (1 - z) * n + z * h


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        for name, v in (('hidden_size', hidden_size), ('num_layers', num_layers)):
            if not isinstance(v, int):  # PyTorch: a TypeError
                raise TypeError(f"{name} should be of type int, got: {type(v).__name__}")
            if v <= 0:
                raise ValueError(f"{name} must be an integer greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != 'LSTM':
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        out = self._out_size = proj_size or hidden_size  # h's size (LSTM: projected)
        dt = _dt(dtype)
        gate = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else out * dirs
            for d in range(dirs):
                sfx = f'_l{layer}' + ('_reverse' if d else '')
                shapes = [('weight_ih', (gate, in_size)), ('weight_hh', (gate, out))]
                if bias:
                    shapes += [('bias_ih', (gate,)), ('bias_hh', (gate,))]
                if proj_size:
                    shapes.append(('weight_hr', (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + sfx, Parameter(zeros(*shape, dtype=dt)))
                    self._flat_weights_names.append(name + sfx)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in self._flat_weights_names if n.endswith(s)]
                for s in self._suffixes()]

    def _suffixes(self):
        return [f'_l{layer}' + ('_reverse' if d else '') for layer in range(self.num_layers)
                for d in range(2 if self.bidirectional else 1)]

    def _weights(self, sfx):
        w = [getattr(self, 'weight_ih' + sfx), getattr(self, 'weight_hh' + sfx)]
        if self.bias:
            return w + [getattr(self, 'bias_ih' + sfx), getattr(self, 'bias_hh' + sfx)]
        return w + [None, None]

    def _check_input(self, input, hx):
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _run_direction(self, x, sfx, reverse, h, c, live=None):
        """x: (L, N, in); returns outputs (L, N, H), last h (and c). live
        (packed input): per step an (N, 1) mask of the sequences not yet
        ended; the others keep their state and output zeros"""
        w_ih, w_hh, b_ih, b_hh = self._weights(sfx)
        w_hr = getattr(self, 'weight_hr' + sfx) if self.proj_size else None
        L = x.shape[0]
        gi = _C.matmul(x, w_ih.t())  # every step's input projection at once
        if b_ih is not None:
            gi = gi + b_ih
        outs = [None] * L
        for k in range(L):
            t = L - 1 - k if reverse else k
            g = gi[t]
            h_old, c_old = h, c
            if self.mode == 'LSTM':
                h, c = _lstm_step(g, h, c, w_hh, b_hh, w_hr)
            elif self.mode == 'GRU':
                h = _gru_step(g, h, w_hh, b_hh)
            else:
                h = _rnn_step(self.mode, g, h, w_hh, b_hh)
            if live is not None:
                h = _C.where(live[t], h, h_old)
                c = _C.where(live[t], c, c_old) if c is not None else None
                outs[t] = _C.where(live[t], h, zeros((), dtype=h.dtype))
            else:
                outs[t] = h
        return _C.stack(outs, 0) if L else x.new_zeros(0, x.shape[1], self._out_size), h, c

    def forward(self, input, hx=None):
        from .utils.rnn import PackedSequence
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        return self._forward(input, hx)

    def _forward_packed(self, packed, hx):
        """a PackedSequence in and out: run padded (sorted batch order) with
        each sequence's steps past its length masked; h_n in the caller's
        order, as PyTorch's"""
        from .utils.rnn import PackedSequence, padded_sorted
        x, lens = padded_sorted(packed)
        order, unorder = packed.sorted_indices, packed.unsorted_indices
        if hx is not None and order is not None:
            hx = tuple(_C.index_select(t, 1, order) for t in hx) \
                if self.mode == 'LSTM' else _C.index_select(hx, 1, order)
        steps = arange(x.shape[0]).reshape(-1, 1, 1)
        live = steps < tensor(lens, dtype=_C.int64).reshape(1, -1, 1)   # (L, N, 1)
        out, state = self._forward(x, hx, live, batch_first=False)
        sizes = [int(v) for v in packed.batch_sizes.tolist()]
        data = _C.cat([out[t, :n] for t, n in enumerate(sizes)], 0)
        if unorder is not None:
            state = tuple(_C.index_select(t, 1, unorder) for t in state) \
                if self.mode == 'LSTM' else _C.index_select(state, 1, unorder)
        return PackedSequence(data, packed.batch_sizes, order, unorder), state

    def _forward(self, input, hx=None, live=None, batch_first=None):
        batch_first = self.batch_first if batch_first is None else batch_first
        self._check_input(input, hx)
        batched = input.ndim == 3
        lstm = self.mode == 'LSTM'
        x = input if batched else input.unsqueeze(1)
        if batched and batch_first:
            x = x.transpose(0, 1)
        n = x.shape[1]
        dirs = 2 if self.bidirectional else 1
        expect = (self.num_layers * dirs, n, self._out_size)
        expect_c = (self.num_layers * dirs, n, self.hidden_size)
        if hx is None:
            h0 = zeros(*expect, dtype=x.dtype)
            c0 = zeros(*expect_c, dtype=x.dtype) if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
            if not batched:
                if h0.ndim != 2 or (lstm and c0.ndim != 2):
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{h0.ndim}-D tensor")
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if lstm else None
            elif h0.ndim != 3 or (lstm and c0.ndim != 3):
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{h0.ndim}-D tensor")
            names = ('hidden[0]', 'hidden[1]') if lstm else ('hidden', None)
            for name, t, want in zip(names, (h0, c0), (expect, expect_c)):
                if t is not None and tuple(t.shape) != want:
                    raise RuntimeError(f"Expected {name} size {want}, got {list(t.shape)}")
        hs, cs = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                sfx = f'_l{layer}' + ('_reverse' if d else '')
                o, h, c = self._run_direction(x, sfx, d == 1, h0[k],
                                              c0[k] if lstm else None, live)
                outs.append(o)
                hs.append(h)
                cs.append(c)
            x = outs[0] if dirs == 1 else _C.cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = _C.dropout(x, self.dropout, True, False, None)
        h_n = _C.stack(hs, 0)
        c_n = _C.stack(cs, 0) if lstm else None
        if batched and batch_first:
            x = x.transpose(0, 1)
        if not batched:
            x = x.squeeze(1)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if lstm else None
        return x, ((h_n, c_n) if lstm else h_n)

    def extra_repr(self):
        s = f'{self.input_size}, {self.hidden_size}'
        if self.proj_size:
            s += f', proj_size={self.proj_size}'
        if self.num_layers != 1:
            s += f', num_layers={self.num_layers}'
        if not self.bias:
            s += ', bias=False'
        if self.batch_first:
            s += ', batch_first=True'
        if self.dropout:
            s += f', dropout={self.dropout}'
        if self.bidirectional:
            s += ', bidirectional=True'
        return s

    def flatten_parameters(self):
        """PyTorch's cuDNN weight compaction: nothing to do on the CPU"""


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):  # PyTorch's signature; nonlinearity='tanh' in kwargs
        nonlinearity = kwargs.pop('nonlinearity', 'tanh')
        if len(args) > 3:  # RNN(input, hidden, layers, nonlinearity, bias, ...)
            nonlinearity, args = args[3], args[:3] + args[4:]
        if nonlinearity not in ('tanh', 'relu'):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__('RNN_TANH' if nonlinearity == 'tanh' else 'RNN_RELU', *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__('LSTM', *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__('GRU', *args, **kwargs)


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        factory_kwargs(device, dtype)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        dt = _dt(dtype)
        self.weight_ih = Parameter(zeros(num_chunks * hidden_size, input_size, dtype=dt))
        self.weight_hh = Parameter(zeros(num_chunks * hidden_size, hidden_size, dtype=dt))
        if bias:
            self.bias_ih = Parameter(zeros(num_chunks * hidden_size, dtype=dt))
            self.bias_hh = Parameter(zeros(num_chunks * hidden_size, dtype=dt))
        else:
            self.register_parameter('bias_ih', None)
            self.register_parameter('bias_hh', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _prepare(self, input, hx, lstm=False):
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.ndim}D instead")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            z = zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
            hx = (z, z) if lstm else z
        elif not batched:
            hx = tuple(h.unsqueeze(0) for h in hx) if lstm else hx.unsqueeze(0)
        gi = _C.matmul(x, self.weight_ih.t())
        if self.bias_ih is not None:
            gi = gi + self.bias_ih
        return batched, gi, hx

    def extra_repr(self):
        s = f'{self.input_size}, {self.hidden_size}'
        s = s if self.bias else s + ', bias=False'
        nl = getattr(self, 'nonlinearity', 'tanh')
        return s if nl == 'tanh' else s + f', nonlinearity={nl}'


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity='tanh', device=None,
                 dtype=None):
        if nonlinearity not in ('tanh', 'relu'):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        batched, gi, h = self._prepare(input, hx)
        mode = 'RNN_TANH' if self.nonlinearity == 'tanh' else 'RNN_RELU'
        h = _rnn_step(mode, gi, h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        batched, gi, (h, c) = self._prepare(input, hx, lstm=True)
        h, c = _lstm_step(gi, h, c, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        batched, gi, h = self._prepare(input, hx)
        h = _gru_step(gi, h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


# torch.rnn_tanh_cell & co.: one step of each cell with the weights passed in
def _projection(input, w_ih, b_ih):
    gi = _C.matmul(input, w_ih.t())
    return gi if b_ih is None else gi + b_ih


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _rnn_step('RNN_TANH', _projection(input, w_ih, b_ih), hx, w_hh, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _rnn_step('RNN_RELU', _projection(input, w_ih, b_ih), hx, w_hh, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """(h', c') from hx = (h, c)"""
    h, c = hx
    return _lstm_step(_projection(input, w_ih, b_ih), h, c, w_hh, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _gru_step(_projection(input, w_ih, b_ih), hx, w_hh, b_hh)
