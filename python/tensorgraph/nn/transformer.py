"""Attention and transformer layers over existing ops: MultiheadAttention
(batch_first either way, key_padding_mask and attn_mask as bool or float,
add_bias_kv, add_zero_attn, separate kdim/vdim), TransformerEncoderLayer,
TransformerDecoderLayer and their stacks. PyTorch's submodule and
parameter names (in_proj_weight, out_proj.weight, self_attn.*, linear1,
norm1, ...) and initialisation, so state_dicts load both ways."""
import copy
import math

from .. import _C
from .._creation import _dt, zeros
from . import functional as F, init
from ._factory_kwargs import factory_kwargs
from .containers import ModuleList
from .layers import Dropout, LayerNorm, Linear
from .module import Module
from .parameter import Parameter


def _float_mask(mask, dtype, name):
    """a bool mask (True: not allowed) as -inf / 0; a float mask as it is"""
    if mask is None:
        return None
    if mask.dtype == _C.bool:
        return _C.where(mask, _C.add(zeros((), dtype=dtype), -math.inf), zeros((), dtype=dtype))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask.to(dtype)



class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for MultiheadAttention's out_proj (a plain Linear;
    the name shows in reprs)"""

class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        fk = factory_kwargs(device, dtype)
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        dt = _dt(dtype)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(zeros(3 * embed_dim, embed_dim, dtype=dt))
            self.register_parameter('q_proj_weight', None)
            self.register_parameter('k_proj_weight', None)
            self.register_parameter('v_proj_weight', None)
        else:
            self.q_proj_weight = Parameter(zeros(embed_dim, embed_dim, dtype=dt))
            self.k_proj_weight = Parameter(zeros(embed_dim, self.kdim, dtype=dt))
            self.v_proj_weight = Parameter(zeros(embed_dim, self.vdim, dtype=dt))
            self.register_parameter('in_proj_weight', None)
        if bias:
            self.in_proj_bias = Parameter(zeros(3 * embed_dim, dtype=dt))
        else:
            self.register_parameter('in_proj_bias', None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **fk)
        if add_bias_kv:
            self.bias_k = Parameter(zeros(1, 1, embed_dim, dtype=dt))
            self.bias_v = Parameter(zeros(1, 1, embed_dim, dtype=dt))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _projections(self, query, key, value):
        e = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """(attn_output, attn_weights); weights averaged over heads unless
        average_attn_weights=False, None unless need_weights"""
        batched = query.ndim == 3
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but "
                                 f"received {query.ndim}-D query tensor")
        # batch-first inputs keep their layout: heads are strided views of the
        # projections (no transposed copies of the inputs, of their gradients
        # or of the output)
        bf = self.batch_first and batched
        if not batched:
            query, key, value = (t.unsqueeze(1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        seq = 1 if bf else 0  # the sequence dim; the batch is the other of the first two
        L, N, E = query.shape[seq], query.shape[1 - seq], query.shape[2]
        if E != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but "
                                 f"got {E}")
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                                 f"{tuple(value.shape)}")
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask` "
                               "to create this mask.")
        H, D = self.num_heads, self.head_dim
        q, k, v = self._projections(query, key, value)
        attn_mask = _float_mask(attn_mask, q.dtype, 'attn_mask')
        kpm = _float_mask(key_padding_mask, q.dtype, 'key_padding_mask')
        if attn_mask is not None:
            S0 = key.shape[seq]
            if attn_mask.ndim == 2:
                if tuple(attn_mask.shape) != (L, S0):
                    raise RuntimeError(f"The shape of the 2D attn_mask is "
                                       f"{tuple(attn_mask.shape)}, but should be {(L, S0)}.")
                attn_mask = attn_mask.unsqueeze(0)
            elif attn_mask.ndim == 3:
                if tuple(attn_mask.shape) != (N * H, L, S0):
                    raise RuntimeError(f"The shape of the 3D attn_mask is "
                                       f"{tuple(attn_mask.shape)}, but should be "
                                       f"{(N * H, L, S0)}.")
            else:
                raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
        if self.bias_k is not None:
            bshape = (N, 1, E) if bf else (1, N, E)
            k = _C.cat([k, self.bias_k.reshape(1, 1, E).expand(*bshape)], seq)
            v = _C.cat([v, self.bias_v.reshape(1, 1, E).expand(*bshape)], seq)
            attn_mask = F.pad(attn_mask, (0, 1)) if attn_mask is not None else None
            kpm = F.pad(kpm, (0, 1)) if kpm is not None else None

        def heads(t):  # (len, N, E) or (N, len, E) -> (N, H, len, D), a view
            n = t.shape[seq]
            if bf:
                return t.reshape(N, n, H, D).permute(0, 2, 1, 3)
            return t.reshape(n, N, H, D).permute(1, 2, 0, 3)
        q, k, v = heads(q), heads(k), heads(v)
        if self.add_zero_attn:
            k = _C.cat([k, zeros(N, H, 1, D, dtype=k.dtype)], 2)
            v = _C.cat([v, zeros(N, H, 1, D, dtype=v.dtype)], 2)
            attn_mask = F.pad(attn_mask, (0, 1)) if attn_mask is not None else None
            kpm = F.pad(kpm, (0, 1)) if kpm is not None else None
        S = k.shape[2]
        if attn_mask is not None and attn_mask.ndim == 3 and attn_mask.shape[0] == N * H:
            attn_mask = attn_mask.reshape(N, H, L, S)  # per (batch, head), as the scores
        if kpm is not None:
            if tuple(kpm.shape) != (N, S):
                raise AssertionError(f"expecting key_padding_mask shape of {(N, S)}, but got "
                                     f"{tuple(kpm.shape)}")
            kpm = kpm.reshape(N, 1, 1, S)
            attn_mask = kpm if attn_mask is None else attn_mask + kpm
        scores = _C.matmul(q * (1.0 / math.sqrt(D)), k.transpose(-2, -1))  # (N, H, L, S)
        if attn_mask is not None:
            scores = scores + attn_mask
        w = _C.softmax(scores, -1)
        if self.dropout > 0 and self.training:
            w = _C.dropout(w, self.dropout, True, False, None)
        out = _C.matmul(w, v)                                   # (N, H, L, D)
        out = (out.permute(0, 2, 1, 3).reshape(N, L, E) if bf
               else out.permute(2, 0, 1, 3).reshape(L, N, E))
        out = self.out_proj(out)
        weights = None
        if need_weights:
            weights = w
            if average_attn_weights:
                weights = _C.mean(weights, 1)
            if not batched:
                weights = weights.squeeze(0)
        if not batched:
            out = out.squeeze(1)
        return out, weights


def _activation(act):
    if callable(act):
        return act
    if act == 'relu':
        return F.relu
    if act == 'gelu':
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {act}")


class TransformerEncoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        super().__init__()
        fk = factory_kwargs(device, dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)
        self.batch_first = batch_first

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerDecoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        super().__init__()
        fk = factory_kwargs(device, dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, **fk)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **fk)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask,
                                               memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x


def _clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class TransformerEncoder(Module):
    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """float mask: -inf above the diagonal, 0 elsewhere"""
    factory_kwargs(device, dtype)
    from .._ops_shape import triu
    from .._creation import full
    return triu(full((sz, sz), -math.inf, dtype=dtype), 1)


class Transformer(Module):
    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 device=None, dtype=None):
        super().__init__()
        fk = factory_kwargs(device, dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, **fk)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, **fk))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, **fk)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, **fk))
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        return generate_square_subsequent_mask(sz, device, dtype)


class _AttentionWeights:
    """the attributes MultiheadAttention.forward reads, from
    F.multi_head_attention_forward's arguments (so the functional form is
    the module's code, not a copy)"""
    batch_first = False
    _projections = MultiheadAttention._projections

    def __init__(self, embed_dim, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
                 add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training,
                 use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight):
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads "
                                 f"{num_heads}")
        self._qkv_same_embed_dim = not use_separate_proj_weight
        if use_separate_proj_weight:
            if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
                raise AssertionError("use_separate_proj_weight is True but q_proj_weight, "
                                     "k_proj_weight or v_proj_weight is None")
        elif in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        self.in_proj_weight, self.in_proj_bias = in_proj_weight, in_proj_bias
        self.q_proj_weight, self.k_proj_weight = q_proj_weight, k_proj_weight
        self.v_proj_weight = v_proj_weight
        if (bias_k is None) != (bias_v is None):
            raise AssertionError("bias_k and bias_v must both be given or both be None")
        self.bias_k, self.bias_v, self.add_zero_attn = bias_k, bias_v, add_zero_attn
        self.dropout, self.training = dropout_p, training
        self.out_proj = lambda t: F.linear(t, out_proj_weight, out_proj_bias)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """PyTorch's F.multi_head_attention_forward: MultiheadAttention.forward
    (sequence-first inputs) with the weights passed in; static_k/static_v
    are not supported"""
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k and static_v are not "
                                  "supported")
    if query.shape[-1] != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {query.shape[-1]}")
    shim = _AttentionWeights(embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
                             bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                             training, use_separate_proj_weight, q_proj_weight, k_proj_weight,
                             v_proj_weight)
    return MultiheadAttention.forward(shim, query, key, value, key_padding_mask, need_weights,
                                      attn_mask, average_attn_weights, is_causal)
