"""PyTorch habits at the edges: misuse raises the exception type PyTorch
raises (with tensorgraph's own message). One table, each case written once
over a module `m` (tensorgraph or torch), the type PyTorch raises next to
it. The table is checked two ways: tensorgraph raises exactly that type
(always), and PyTorch does too (with python3-torch, and not under the
sanitizer run, where a C++ exception thrown in torch aborts: conftest.py).

How the types come about (python/src/module.c): a failed C call raises
RuntimeError, as PyTorch's TORCH_CHECK does, IndexError for TG_ERR_INDEX
(PyTorch's TORCH_CHECK_INDEX: dims and most index ranges); ops where
PyTorch checks otherwise say so in python/src/ops_table.c (tgpy_op_checks,
tgpy_op_validate); ValueError and TypeError come from the Python-side
checks, where PyTorch makes them in Python (optimizers, modules, losses'
batch sizes, argument types).

Left out on purpose (PyTorch 1.13 differs from what it documents or from
later versions, or the function does not exist here): tril of a 1-d tensor
(1.13's IndexError is an accident; later versions and tensorgraph raise
RuntimeError), masked_fill with a float mask (1.13 silently does nothing;
tensorgraph refuses it as later versions do), loading a file that is not a
checkpoint (torch.load's pickle error vs OSError from the safetensors
reader), a str given for a dim (PyTorch looks it up as a named-tensor dim
name, a RuntimeError; tensorgraph has no named tensors: TypeError), bool
options of the Python-written functions such as sort(descending="x")
(only the op table's bool parameters are strict), gather with int32
indices (PyTorch wants int64; tensorgraph's ops take both), torch.normal /
inverse / linalg.det (not in tensorgraph)."""
import os
import tempfile

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as tnn
import tensorgraph.nn.functional as TF

from conftest import SANITIZED, torch


def _t(m):
    return m.ones(2, 3)


def _param(m):
    return m.ones(2, requires_grad=True)


def _backward_twice(m):
    x = _param(m)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _grad_of_unused(m):
    x, z = _param(m), _param(m)
    return m.autograd.grad((x * 2).sum(), [x, z])


def _assign_grad(m, shape):
    x = _param(m)
    x.grad = m.ones(*shape)


def _modified_saved_tensor(m):
    x = _param(m)
    a = x.exp()
    b = a * a  # saves a
    a.add_(1)
    b.sum().backward()


def _backward_no_grad(m):
    x = _param(m)
    with m.no_grad():
        y = (x * 2).sum()
    y.backward()


def _setitem(m, index, value):
    t = _t(m)
    t[index] = value


def _int_inplace_div(m):
    t = m.ones(2, dtype=m.int64)
    t /= 2


def _assign_tensor_to_parameter(m, nn):
    layer = nn.Linear(2, 2)
    layer.weight = m.ones(2, 2)


def _bn_one_value_per_channel(m, nn):
    bn = nn.BatchNorm1d(3)
    bn.train()
    bn(m.ones(1, 3))


def _set_requires_grad(t):
    t.requires_grad = True


def _sgd(m):
    return m.optim.SGD([_param(m)], lr=0.1)


def _same_param_twice(m):
    x = _param(m)
    m.optim.SGD([{'params': [x]}, {'params': [x]}], lr=0.1)


# (name, misuse over module m, nn, F, the type PyTorch raises)
CASES = [
    # creation: bad dtypes, sizes, ranges
    ("randint low > high", lambda m, nn, F: m.randint(5, 2, (3,)), RuntimeError),
    ("randint low == high", lambda m, nn, F: m.randint(2, 2, (3,)), RuntimeError),
    ("tensor dtype str", lambda m, nn, F: m.tensor([1], dtype="foo"), TypeError),
    ("tensor dtype int", lambda m, nn, F: m.tensor([1], dtype=3), TypeError),
    ("zeros dtype str", lambda m, nn, F: m.zeros(2, dtype="float32"), TypeError),
    ("ones negative size", lambda m, nn, F: m.ones(-1), RuntimeError),
    ("zeros float size", lambda m, nn, F: m.zeros(2.5), TypeError),
    ("randn negative size", lambda m, nn, F: m.randn(-2), RuntimeError),
    ("randperm negative", lambda m, nn, F: m.randperm(-1), RuntimeError),
    ("arange zero step", lambda m, nn, F: m.arange(0, 5, 0), RuntimeError),
    ("arange step sign", lambda m, nn, F: m.arange(0, 5, -1), RuntimeError),
    ("linspace negative steps", lambda m, nn, F: m.linspace(0, 1, -2), RuntimeError),
    ("full str value", lambda m, nn, F: m.full((2,), "a"), TypeError),
    ("unknown keyword", lambda m, nn, F: m.ones(2, foo=1), TypeError),
    ("multinomial too many", lambda m, nn, F: m.multinomial(m.ones(3), 5), RuntimeError),
    # shapes
    ("reshape numel", lambda m, nn, F: _t(m).reshape(4, 2), RuntimeError),
    ("reshape two -1", lambda m, nn, F: _t(m).reshape(-1, -1), RuntimeError),
    ("view numel", lambda m, nn, F: _t(m).view(5), RuntimeError),
    ("view str", lambda m, nn, F: _t(m).view("a"), TypeError),
    ("permute length", lambda m, nn, F: _t(m).permute(0), RuntimeError),
    ("cat sizes", lambda m, nn, F: m.cat([m.ones(2, 3), m.ones(2, 4)]), RuntimeError),
    ("stack sizes", lambda m, nn, F: m.stack([m.ones(2), m.ones(3)]), RuntimeError),
    ("add broadcast", lambda m, nn, F: m.ones(2, 3) + m.ones(4), RuntimeError),
    ("matmul sizes", lambda m, nn, F: m.ones(2, 3) @ m.ones(2, 3), RuntimeError),
    ("matmul 0-d", lambda m, nn, F: m.ones(()) @ m.ones(()), RuntimeError),
    ("expand", lambda m, nn, F: _t(m).expand(4, 3), RuntimeError),
    ("repeat too few", lambda m, nn, F: _t(m).repeat(2), RuntimeError),
    ("narrow past end", lambda m, nn, F: _t(m).narrow(1, 2, 5), RuntimeError),
    ("chunk zero", lambda m, nn, F: _t(m).chunk(0), RuntimeError),
    ("split zero", lambda m, nn, F: _t(m).split(0), RuntimeError),
    ("where sizes", lambda m, nn, F: m.where(m.ones(2) > 0, m.ones(3), m.ones(4)), RuntimeError),
    ("einsum sizes", lambda m, nn, F: m.einsum("ij,jk->ik", m.ones(2, 3), m.ones(4, 5)),
     RuntimeError),
    ("diag 3-d", lambda m, nn, F: m.diag(m.ones(2, 2, 2)), RuntimeError),
    # dims
    ("sum dim", lambda m, nn, F: _t(m).sum(5), IndexError),
    ("sum dim float", lambda m, nn, F: _t(m).sum(1.5), TypeError),
    ("transpose dim", lambda m, nn, F: _t(m).transpose(0, 3), IndexError),
    ("squeeze dim", lambda m, nn, F: _t(m).squeeze(4), IndexError),
    ("unsqueeze dim", lambda m, nn, F: _t(m).unsqueeze(5), IndexError),
    ("cat dim", lambda m, nn, F: m.cat([_t(m), _t(m)], 3), IndexError),
    ("softmax dim", lambda m, nn, F: m.softmax(_t(m), 4), IndexError),
    ("argmax dim", lambda m, nn, F: _t(m).argmax(3), IndexError),
    ("flatten dim", lambda m, nn, F: _t(m).flatten(3), IndexError),
    ("cumsum dim", lambda m, nn, F: m.cumsum(_t(m), 3), IndexError),
    ("sort dim", lambda m, nn, F: m.sort(_t(m), 3), IndexError),
    # indexing
    ("index out of range", lambda m, nn, F: _t(m)[5], IndexError),
    ("too many indices", lambda m, nn, F: _t(m)[0, 0, 0], IndexError),
    ("float index", lambda m, nn, F: _t(m)[1.5], IndexError),
    ("index_select range", lambda m, nn, F: m.index_select(_t(m), 0, m.tensor([7])),
     IndexError),
    ("embedding range", lambda m, nn, F: nn.Embedding(3, 2)(m.tensor([5])), IndexError),
    ("cross_entropy label", lambda m, nn, F: F.cross_entropy(m.ones(2, 3), m.tensor([0, 5])),
     IndexError),
    # conversions
    ("item of many", lambda m, nn, F: _t(m).item(), ValueError),
    ("int of many", lambda m, nn, F: int(_t(m)), ValueError),
    ("bool of many", lambda m, nn, F: bool(_t(m)), RuntimeError),
    ("len of 0-d", lambda m, nn, F: len(m.tensor(1.0)), TypeError),
    ("iter of 0-d", lambda m, nn, F: iter(m.tensor(1.0)), TypeError),
    ("numpy requires grad", lambda m, nn, F: _param(m).numpy(), RuntimeError),
    ("to unknown device", lambda m, nn, F: _t(m).to("foo"), RuntimeError),
    ("type str", lambda m, nn, F: _t(m).type("foo"), ValueError),
    ("add str", lambda m, nn, F: _t(m) + "a", TypeError),
    ("pow str", lambda m, nn, F: _t(m) ** "a", TypeError),
    ("clamp no bounds", lambda m, nn, F: m.clamp(_t(m)), RuntimeError),
    # moved from the list of known differences
    ("permute repeated", lambda m, nn, F: _t(m).permute(0, 0), RuntimeError),
    ("cat of nothing", lambda m, nn, F: m.cat([]), RuntimeError),
    ("topk k too large", lambda m, nn, F: _t(m).topk(5), RuntimeError),
    ("gather index range", lambda m, nn, F: m.gather(_t(m), 1, m.tensor([[5]])), RuntimeError),
    ("scatter index range", lambda m, nn, F: m.zeros(3).scatter(0, m.tensor([5]), m.ones(1)),
     RuntimeError),
    ("one_hot class range", lambda m, nn, F: F.one_hot(m.tensor([3]), 2), RuntimeError),
    ("max_pool2d padding", lambda m, nn, F: F.max_pool2d(m.ones(1, 1, 8, 8), 2, padding=2),
     RuntimeError),
    ("integer division by zero", lambda m, nn, F: m.tensor([1]) // m.tensor([0]), RuntimeError),
    ("index with a str", lambda m, nn, F: _t(m)["a"], TypeError),
    ("mm of vectors", lambda m, nn, F: m.mm(m.ones(3), m.ones(3)), RuntimeError),
    ("where with a float condition",
     lambda m, nn, F: m.where(m.ones(2), m.ones(2), m.ones(2)), RuntimeError),
    ("bitwise and of floats", lambda m, nn, F: m.ones(2) & m.ones(2), RuntimeError),
    # creation (the sweep)
    ("empty negative size", lambda m, nn, F: m.empty(-1), RuntimeError),
    ("zeros negative in a tuple", lambda m, nn, F: m.zeros((2, -3)), RuntimeError),
    ("eye negative", lambda m, nn, F: m.eye(-1), RuntimeError),
    ("full dtype str", lambda m, nn, F: m.full((2,), 1.0, dtype="x"), TypeError),
    ("zeros_like dtype str", lambda m, nn, F: m.zeros_like(_t(m), dtype="x"), TypeError),
    ("tensor ragged", lambda m, nn, F: m.tensor([[1, 2], [3]]), ValueError),
    ("tensor of a str", lambda m, nn, F: m.tensor("abc"), TypeError),
    ("tensor requires_grad str", lambda m, nn, F: m.tensor([1.0], requires_grad="yes"),
     TypeError),
    ("rand generator int", lambda m, nn, F: m.rand(2, generator=5), TypeError),
    ("bernoulli p > 1", lambda m, nn, F: m.bernoulli(m.tensor([1.5])), RuntimeError),
    ("multinomial negative", lambda m, nn, F: m.multinomial(m.tensor([-1., 2.]), 1),
     RuntimeError),
    ("fill_ str", lambda m, nn, F: _t(m).fill_("a"), TypeError),
    # shapes and dtypes in ops
    ("view -1 numel", lambda m, nn, F: _t(m).view(-1, 4), RuntimeError),
    ("cat ndims", lambda m, nn, F: m.cat([m.ones(2), m.ones(2, 2)]), RuntimeError),
    ("stack of nothing", lambda m, nn, F: m.stack([]), RuntimeError),
    ("expand fewer dims", lambda m, nn, F: _t(m).expand(2), RuntimeError),
    ("split sizes sum", lambda m, nn, F: _t(m).split([1, 1], dim=1), RuntimeError),
    ("unflatten sizes", lambda m, nn, F: _t(m).unflatten(1, (2, 2)), RuntimeError),
    ("repeat negative", lambda m, nn, F: _t(m).repeat(-1, 1), RuntimeError),
    ("t of 3-d", lambda m, nn, F: m.ones(2, 2, 2).t(), RuntimeError),
    ("permute negative repeat", lambda m, nn, F: _t(m).permute(0, -2), RuntimeError),
    ("masked_fill mask shape", lambda m, nn, F: _t(m).masked_fill(m.ones(4) > 0, 0.),
     RuntimeError),
    ("einsum output letter", lambda m, nn, F: m.einsum("ij->k", _t(m)), RuntimeError),
    ("einsum operand count", lambda m, nn, F: m.einsum("ij,jk->ik", _t(m)), RuntimeError),
    ("bmm of matrices", lambda m, nn, F: m.bmm(m.ones(2, 2), m.ones(2, 2)), RuntimeError),
    ("bmm batch", lambda m, nn, F: m.bmm(m.ones(2, 2, 2), m.ones(3, 2, 2)), RuntimeError),
    ("mm 3-d", lambda m, nn, F: m.mm(m.ones(2, 2, 2), m.ones(2, 2)), RuntimeError),
    ("matmul dtypes", lambda m, nn, F: m.matmul(m.ones(2, 3), m.ones(3, dtype=m.int64)),
     RuntimeError),
    ("@ dtypes", lambda m, nn, F: m.ones(2, 2, dtype=m.float64) @ m.ones(2, 2), RuntimeError),
    ("dot sizes", lambda m, nn, F: m.dot(m.ones(2), m.ones(3)), RuntimeError),
    ("dot of matrices", lambda m, nn, F: m.dot(m.ones(2, 2), m.ones(2, 2)), RuntimeError),
    ("outer of a matrix", lambda m, nn, F: m.outer(m.ones(2, 2), m.ones(2)), RuntimeError),
    ("tensordot dims", lambda m, nn, F: m.tensordot(_t(m), _t(m), dims=([0], [1])),
     RuntimeError),
    ("diagonal dims", lambda m, nn, F: m.diagonal(_t(m), 0, 0, 0), RuntimeError),
    ("trace of a vector", lambda m, nn, F: m.trace(m.ones(3)), RuntimeError),
    ("cross sizes", lambda m, nn, F: m.cross(m.ones(2, 2), m.ones(2, 2)), RuntimeError),
    ("kthvalue k", lambda m, nn, F: m.kthvalue(m.ones(3), 5), RuntimeError),
    ("histc bins", lambda m, nn, F: m.histc(m.ones(3), bins=-1), RuntimeError),
    ("bincount negative", lambda m, nn, F: m.bincount(m.tensor([-1])), RuntimeError),
    ("searchsorted dims", lambda m, nn, F: m.searchsorted(m.ones(2, 2), m.ones(3)),
     RuntimeError),
    ("chunk negative", lambda m, nn, F: _t(m).chunk(-1), RuntimeError),
    ("narrow negative length", lambda m, nn, F: _t(m).narrow(0, 0, -1), RuntimeError),
    ("lerp sizes", lambda m, nn, F: m.lerp(m.ones(2), m.ones(3), 0.5), RuntimeError),
    ("clamp min tensor shape", lambda m, nn, F: m.clamp(_t(m), min=m.ones(4)), RuntimeError),
    ("where condition sizes", lambda m, nn, F: m.where(m.ones(3) > 0, m.ones(2), m.ones(2)),
     RuntimeError),
    ("where int condition",
     lambda m, nn, F: m.where(m.ones(2, dtype=m.int64), m.ones(2), m.ones(2)), RuntimeError),
    ("mean of ints", lambda m, nn, F: m.ones(2, dtype=m.int64).mean(), RuntimeError),
    ("std of ints", lambda m, nn, F: m.ones(2, dtype=m.int64).std(), RuntimeError),
    ("softmax of ints", lambda m, nn, F: m.softmax(m.ones(2, dtype=m.int64), 0), RuntimeError),
    ("max of empty", lambda m, nn, F: m.ones(0).max(), RuntimeError),
    ("log_softmax of ints", lambda m, nn, F: F.log_softmax(m.ones(2, dtype=m.int64), 0),
     RuntimeError),
    ("relu of bools", lambda m, nn, F: F.relu(m.ones(2) > 0), RuntimeError),
    ("neg of bools", lambda m, nn, F: -(m.ones(2) > 0), RuntimeError),
    ("sub of bools", lambda m, nn, F: (m.ones(2) > 0) - (m.ones(2) > 0), RuntimeError),
    ("abs of bools", lambda m, nn, F: m.abs(m.ones(2) > 0), RuntimeError),
    ("int to a negative int power", lambda m, nn, F: m.tensor([2]) ** -1, RuntimeError),
    ("pow int negative", lambda m, nn, F: m.pow(m.tensor([2]), -1), RuntimeError),
    ("float | float", lambda m, nn, F: m.ones(2) | m.ones(2), RuntimeError),
    ("float ^ float", lambda m, nn, F: m.ones(2) ^ m.ones(2), RuntimeError),
    ("bool & float", lambda m, nn, F: (m.ones(2) > 0) & m.ones(2), RuntimeError),
    ("float & int", lambda m, nn, F: m.ones(2) & 1, RuntimeError),
    ("~ float", lambda m, nn, F: ~m.ones(2), TypeError),
    ("int add_ float", lambda m, nn, F: m.ones(2, dtype=m.int64).add_(1.5), RuntimeError),
    ("int add_ float alpha", lambda m, nn, F: m.ones(2, dtype=m.int64).add_(1, alpha=0.5),
     RuntimeError),
    ("int /=", lambda m, nn, F: _int_inplace_div(m), RuntimeError),
    ("add_ broadcast out", lambda m, nn, F: _t(m).add_(m.ones(3, 3)), RuntimeError),
    ("copy_ shape", lambda m, nn, F: _t(m).copy_(m.ones(4)), RuntimeError),
    ("expand_as", lambda m, nn, F: m.ones(2).expand_as(m.ones(3)), RuntimeError),
    ("cumsum dtype str", lambda m, nn, F: m.cumsum(_t(m), 0, dtype="x"), TypeError),
    ("to dtype str", lambda m, nn, F: _t(m).to(dtype="x"), TypeError),
    # dims out of range
    ("unbind dim", lambda m, nn, F: _t(m).unbind(5), IndexError),
    ("select dim", lambda m, nn, F: _t(m).select(3, 0), IndexError),
    ("flip dim", lambda m, nn, F: m.flip(_t(m), (5,)), IndexError),
    ("roll dim", lambda m, nn, F: m.roll(_t(m), 1, 5), IndexError),
    ("movedim dim", lambda m, nn, F: _t(m).movedim(0, 5), IndexError),
    ("unsqueeze negative dim", lambda m, nn, F: _t(m).unsqueeze(-4), IndexError),
    ("var dim", lambda m, nn, F: _t(m).var(dim=5), IndexError),
    ("topk dim", lambda m, nn, F: m.topk(_t(m), 2, dim=5), IndexError),
    ("max dim", lambda m, nn, F: _t(m).max(dim=5), IndexError),
    ("cumprod dim", lambda m, nn, F: m.cumprod(_t(m), 3), IndexError),
    ("sort negative dim", lambda m, nn, F: m.sort(_t(m), -3), IndexError),
    ("narrow dim", lambda m, nn, F: _t(m).narrow(5, 0, 1), IndexError),
    ("size dim", lambda m, nn, F: _t(m).size(5), IndexError),
    ("stride dim", lambda m, nn, F: _t(m).stride(5), IndexError),
    ("gather dim", lambda m, nn, F: m.gather(_t(m), 5, m.tensor([[0]])), IndexError),
    ("scatter dim", lambda m, nn, F: m.zeros(3).scatter(2, m.tensor([0]), m.ones(1)),
     IndexError),
    ("unique dim", lambda m, nn, F: m.unique(_t(m), dim=5), IndexError),
    ("Softmax dim", lambda m, nn, F: nn.Softmax(dim=5)(_t(m)), IndexError),
    # indices
    ("select index", lambda m, nn, F: _t(m).select(0, 5), IndexError),
    ("index with a list of str", lambda m, nn, F: _t(m)[["a"]], TypeError),
    ("index with an object", lambda m, nn, F: _t(m)[object()], IndexError),
    ("index with a float tensor", lambda m, nn, F: _t(m)[m.tensor([1.0])], IndexError),
    ("index list out of range", lambda m, nn, F: _t(m)[[0, 5]], IndexError),
    ("bool mask shape", lambda m, nn, F: _t(m)[m.ones(3) > 0], IndexError),
    ("setitem index", lambda m, nn, F: _setitem(m, 5, 1), IndexError),
    ("setitem shape", lambda m, nn, F: _setitem(m, 0, m.ones(5)), RuntimeError),
    ("take range", lambda m, nn, F: m.take(_t(m), m.tensor([10])), IndexError),
    ("index_select 2-d index", lambda m, nn, F: _t(m).index_select(0, m.tensor([[0]])),
     IndexError),
    ("index_select float index", lambda m, nn, F: _t(m).index_select(0, m.tensor([0.])),
     RuntimeError),
    ("gather negative index", lambda m, nn, F: m.gather(_t(m), 1, m.tensor([[-1]])),
     RuntimeError),
    ("gather ndim", lambda m, nn, F: m.gather(_t(m), 1, m.tensor([0])), RuntimeError),
    ("scatter float index", lambda m, nn, F: m.zeros(3).scatter(0, m.tensor([0.]), m.ones(1)),
     RuntimeError),
    ("one_hot negative class", lambda m, nn, F: F.one_hot(m.tensor([-1]), 2), RuntimeError),
    ("one_hot float", lambda m, nn, F: F.one_hot(m.tensor([1.0]), 2), RuntimeError),
    ("one_hot negative classes", lambda m, nn, F: F.one_hot(m.tensor([1]), -2), RuntimeError),
    ("argmax of empty", lambda m, nn, F: m.ones(0).argmax(), IndexError),
    ("embedding negative", lambda m, nn, F: nn.Embedding(3, 2)(m.tensor([-1])), IndexError),
    ("embedding float", lambda m, nn, F: nn.Embedding(3, 2)(m.tensor([1.0])), RuntimeError),
    ("take range 2", lambda m, nn, F: m.take(_t(m), m.tensor([-7])), IndexError),
    ("masked_select mask shape", lambda m, nn, F: m.masked_select(_t(m), m.ones(4) > 0),
     RuntimeError),
    # argument types
    ("new_tensor of a str", lambda m, nn, F: _t(m).new_tensor("a"), TypeError),
    ("as_tensor of a str", lambda m, nn, F: m.as_tensor("a"), TypeError),
    ("tensor of a list of str", lambda m, nn, F: m.tensor(["a", "b"]), ValueError),
    ("tensor of None", lambda m, nn, F: m.tensor(None), RuntimeError),
    ("tensor of a set", lambda m, nn, F: m.tensor({1, 2}), RuntimeError),
    ("tensor of a dict", lambda m, nn, F: m.tensor({1: 2}), RuntimeError),
    ("reshape str", lambda m, nn, F: _t(m).reshape("a"), TypeError),
    ("reshape float", lambda m, nn, F: _t(m).reshape(2.0, 3), TypeError),
    ("zeros str size", lambda m, nn, F: m.zeros("a"), TypeError),
    ("ones float in a list", lambda m, nn, F: m.ones([2.0]), TypeError),
    ("eye float", lambda m, nn, F: m.eye(2.5), TypeError),
    ("diag float diagonal", lambda m, nn, F: m.diag(m.ones(2), 1.5), TypeError),
    ("tril float diagonal", lambda m, nn, F: m.tril(_t(m), 1.5), TypeError),
    ("full_like dtype str", lambda m, nn, F: m.full_like(_t(m), 1, dtype="x"), TypeError),
    ("stack of ints", lambda m, nn, F: m.stack([1, 2]), TypeError),
    ("cat of a tensor", lambda m, nn, F: m.cat(_t(m)), TypeError),
    ("unsqueeze float dim", lambda m, nn, F: _t(m).unsqueeze(1.5), TypeError),
    ("transpose str dim", lambda m, nn, F: _t(m).transpose("a", 0), TypeError),
    ("argmax float dim", lambda m, nn, F: _t(m).argmax(dim=1.5), TypeError),
    ("squeeze float dim", lambda m, nn, F: _t(m).squeeze(1.5), TypeError),
    ("sum keepdim int", lambda m, nn, F: m.sum(_t(m), 0, keepdim=1), TypeError),
    ("mean keepdim str", lambda m, nn, F: _t(m).mean(0, keepdim="yes"), TypeError),
    ("topk float k", lambda m, nn, F: _t(m).topk(1.5), TypeError),
    ("topk negative k", lambda m, nn, F: _t(m).topk(-1), RuntimeError),
    ("numel with an argument", lambda m, nn, F: _t(m).numel(1), TypeError),
    ("F.leaky_relu str slope", lambda m, nn, F: F.leaky_relu(_t(m), "a"), TypeError),
    ("rand of ints", lambda m, nn, F: m.rand(2, dtype=m.int64), RuntimeError),
    ("randn of ints", lambda m, nn, F: m.randn(2, dtype=m.int64), RuntimeError),
    ("randn_like of ints", lambda m, nn, F: m.randn_like(m.ones(2, dtype=m.int64)),
     RuntimeError),
    ("normal_ negative std", lambda m, nn, F: _t(m).normal_(0, -1), RuntimeError),
    ("uniform_ from > to", lambda m, nn, F: _t(m).uniform_(1, 0), RuntimeError),
    ("set_num_threads 0", lambda m, nn, F: m.set_num_threads(0), RuntimeError),
    ("view of a transpose", lambda m, nn, F: _t(m).t().view(6), RuntimeError),
    # conversions
    ("float of many", lambda m, nn, F: float(_t(m)), ValueError),
    ("item of empty", lambda m, nn, F: m.ones(0).item(), ValueError),
    ("bool of empty", lambda m, nn, F: bool(m.ones(0)), RuntimeError),
    # autograd
    ("backward non-scalar", lambda m, nn, F: _param(m).mul(2).backward(), RuntimeError),
    ("backward no grad", lambda m, nn, F: m.ones(2).sum().backward(), RuntimeError),
    ("requires_grad int", lambda m, nn, F: m.ones(2, dtype=m.int64).requires_grad_(),
     RuntimeError),
    ("in-place on leaf", lambda m, nn, F: _param(m).add_(1), RuntimeError),
    ("grad of input without grad",
     lambda m, nn, F: m.autograd.grad(_param(m).sum(), [m.ones(2)]), RuntimeError),
    ("backward twice", lambda m, nn, F: _backward_twice(m), RuntimeError),
    ("grad of an unused input", lambda m, nn, F: _grad_of_unused(m), RuntimeError),
    ("grad assigned of another shape", lambda m, nn, F: _assign_grad(m, (3,)), RuntimeError),
    ("requires_grad_(False) of a non-leaf",
     lambda m, nn, F: (_param(m) * 2).requires_grad_(False), RuntimeError),
    ("tensor() of ints requiring grad",
     lambda m, nn, F: m.tensor([1], requires_grad=True), RuntimeError),
    ("ones of ints requiring grad",
     lambda m, nn, F: m.ones(2, dtype=m.int64, requires_grad=True), RuntimeError),
    ("backward gradient shape", lambda m, nn, F: (_param(m) * 2).backward(m.ones(3)),
     RuntimeError),
    ("in-place on a view of a leaf", lambda m, nn, F: _param(m).view(2).add_(1), RuntimeError),
    ("saved tensor modified", lambda m, nn, F: _modified_saved_tensor(m), RuntimeError),
    ("hook on a tensor without grad", lambda m, nn, F: m.ones(2).register_hook(lambda g: g),
     RuntimeError),
    ("backward of a no_grad result", lambda m, nn, F: _backward_no_grad(m), RuntimeError),
    ("autograd.grad of a non-scalar", lambda m, nn, F: m.autograd.grad(_param(m) * 2, [_param(m)]),
     RuntimeError),
    ("backward gradient a number", lambda m, nn, F: _param(m).sum().backward(5), TypeError),
    ("grad_outputs count", lambda m, nn, F: m.autograd.grad(
        [_param(m).sum(), _param(m).sum()], [_param(m)], grad_outputs=[m.ones(())]),
     RuntimeError),
    ("Parameter of ints", lambda m, nn, F: nn.Parameter(m.ones(2, dtype=m.int64)), RuntimeError),
    ("mul_ on a leaf", lambda m, nn, F: _param(m).mul_(2), RuntimeError),
    ("requires_grad = True on ints", lambda m, nn, F: _set_requires_grad(m.ones(2, dtype=m.int64)),
     RuntimeError),
    ("retain_grad without grad", lambda m, nn, F: m.ones(2).retain_grad(), RuntimeError),
    ("backward of ints", lambda m, nn, F: m.ones(2, dtype=m.int64).sum().backward(),
     RuntimeError),
    # modules
    ("linear features", lambda m, nn, F: nn.Linear(3, 2)(m.ones(2, 4)), RuntimeError),
    ("linear negative", lambda m, nn, F: nn.Linear(-1, 2), RuntimeError),
    ("conv2d channels", lambda m, nn, F: nn.Conv2d(3, 2, 3)(m.ones(1, 2, 5, 5)), RuntimeError),
    ("conv2d kernel", lambda m, nn, F: nn.Conv2d(1, 1, 7)(m.ones(1, 1, 3, 3)), RuntimeError),
    ("conv2d groups", lambda m, nn, F: nn.Conv2d(3, 2, 3, groups=2), ValueError),
    ("conv2d padding str", lambda m, nn, F: nn.Conv2d(1, 1, 3, padding="foo"), ValueError),
    ("max_pool2d kernel", lambda m, nn, F: F.max_pool2d(m.ones(1, 1, 2, 2), 3), RuntimeError),
    ("batch_norm channels", lambda m, nn, F: nn.BatchNorm2d(3)(m.ones(2, 4, 2, 2)),
     RuntimeError),
    ("layer_norm shape", lambda m, nn, F: nn.LayerNorm(4)(m.ones(2, 3)), RuntimeError),
    ("dropout p", lambda m, nn, F: nn.Dropout(1.5), ValueError),
    ("F.dropout p", lambda m, nn, F: F.dropout(m.ones(2), p=-0.1), ValueError),
    ("pad odd length", lambda m, nn, F: F.pad(_t(m), (1,)), RuntimeError),
    ("interpolate no size", lambda m, nn, F: F.interpolate(m.ones(1, 1, 2, 2)), ValueError),
    ("add_module name", lambda m, nn, F: nn.Module().add_module(3, nn.Linear(1, 1)), TypeError),
    ("Sequential index", lambda m, nn, F: nn.Sequential(nn.ReLU())[3], IndexError),
    ("state_dict missing", lambda m, nn, F: nn.Linear(2, 2).load_state_dict({}), RuntimeError),
    ("state_dict shape", lambda m, nn, F: nn.Linear(2, 2).load_state_dict(
        {"weight": m.ones(3, 3), "bias": m.ones(2)}), RuntimeError),
    ("linear int input", lambda m, nn, F: nn.Linear(3, 2)(m.ones(2, 3, dtype=m.int64)),
     RuntimeError),
    ("linear double input", lambda m, nn, F: nn.Linear(3, 2)(m.ones(2, 3, dtype=m.float64)),
     RuntimeError),
    ("F.linear sizes", lambda m, nn, F: F.linear(m.ones(2, 3), m.ones(4, 5)), RuntimeError),
    ("conv2d 2-d input", lambda m, nn, F: nn.Conv2d(1, 1, 3)(m.ones(5, 5)), RuntimeError),
    ("conv2d 3-d input channels", lambda m, nn, F: nn.Conv2d(1, 1, 3)(m.ones(2, 5, 5)),
     RuntimeError),
    ("conv2d stride 0", lambda m, nn, F: nn.Conv2d(1, 1, 3, stride=0)(m.ones(1, 1, 5, 5)),
     RuntimeError),
    ("conv2d kernel 0", lambda m, nn, F: nn.Conv2d(1, 1, 0)(m.ones(1, 1, 3, 3)), RuntimeError),
    ("F.conv2d 3-d weight", lambda m, nn, F: F.conv2d(m.ones(1, 1, 5, 5), m.ones(1, 1, 3)),
     RuntimeError),
    ("F.conv2d stride triple",
     lambda m, nn, F: F.conv2d(m.ones(1, 1, 5, 5), m.ones(1, 1, 3, 3), stride=(1, 2, 3)),
     RuntimeError),
    ("F.conv1d stride pair",
     lambda m, nn, F: F.conv1d(m.ones(1, 1, 4), m.ones(1, 1, 2), stride=(1, 2)), RuntimeError),
    ("max_pool2d kernel triple", lambda m, nn, F: F.max_pool2d(m.ones(1, 1, 4, 4), (1, 2, 3)),
     RuntimeError),
    ("max_pool2d stride 0", lambda m, nn, F: F.max_pool2d(m.ones(1, 1, 4, 4), 2, stride=0),
     RuntimeError),
    ("avg_pool2d stride 0", lambda m, nn, F: F.avg_pool2d(m.ones(1, 1, 4, 4), 2, stride=0),
     RuntimeError),
    ("max_pool1d stride 0", lambda m, nn, F: F.max_pool1d(m.ones(1, 1, 4), 2, stride=0),
     RuntimeError),
    ("avg_pool2d kernel", lambda m, nn, F: F.avg_pool2d(m.ones(1, 1, 2, 2), 3), RuntimeError),
    ("BatchNorm1d features", lambda m, nn, F: nn.BatchNorm1d(3)(m.ones(2, 4)), RuntimeError),
    ("BatchNorm2d of 2-d", lambda m, nn, F: nn.BatchNorm2d(3)(m.ones(2, 3)), ValueError),
    ("BatchNorm one value per channel", lambda m, nn, F: _bn_one_value_per_channel(m, nn),
     ValueError),
    ("F.batch_norm one value per channel",
     lambda m, nn, F: F.batch_norm(m.ones(1, 3), m.zeros(3), m.ones(3), training=True),
     ValueError),
    ("LSTM input size", lambda m, nn, F: nn.LSTM(3, 4)(m.ones(5, 2, 7)), RuntimeError),
    ("GroupNorm groups", lambda m, nn, F: nn.GroupNorm(4, 6), ValueError),
    ("MultiheadAttention heads", lambda m, nn, F: nn.MultiheadAttention(5, 2), AssertionError),
    ("Dropout negative", lambda m, nn, F: nn.Dropout(-0.1), ValueError),
    ("Dropout2d p", lambda m, nn, F: nn.Dropout2d(2.0), ValueError),
    ("ReLU of a str", lambda m, nn, F: nn.ReLU()("a"), TypeError),
    ("kaiming of a vector", lambda m, nn, F: nn.init.kaiming_uniform_(m.ones(2)), ValueError),
    ("xavier of a vector", lambda m, nn, F: nn.init.xavier_uniform_(m.ones(3)), ValueError),
    ("calculate_gain", lambda m, nn, F: nn.init.calculate_gain("foo"), ValueError),
    ("Sequential str index", lambda m, nn, F: nn.Sequential(nn.ReLU())["a"], TypeError),
    ("ModuleList index", lambda m, nn, F: nn.ModuleList()[3], IndexError),
    ("register_parameter a tensor",
     lambda m, nn, F: nn.Module().register_parameter("a", m.ones(2)), TypeError),
    ("register_parameter dotted name",
     lambda m, nn, F: nn.Module().register_parameter("a.b", nn.Parameter(m.ones(2))), KeyError),
    ("register_buffer empty name", lambda m, nn, F: nn.Module().register_buffer("", m.ones(2)),
     KeyError),
    ("add_module empty name", lambda m, nn, F: nn.Module().add_module("", nn.ReLU()), KeyError),
    ("add_module over an attribute",
     lambda m, nn, F: nn.Linear(1, 1).add_module("in_features", nn.ReLU()), KeyError),
    ("assign a tensor to a parameter", lambda m, nn, F: _assign_tensor_to_parameter(m, nn),
     TypeError),
    ("state_dict unexpected key", lambda m, nn, F: nn.Linear(2, 2).load_state_dict(
        {"weight": m.ones(2, 2), "bias": m.ones(2), "extra": m.ones(1)}), RuntimeError),
    ("state_dict not a dict", lambda m, nn, F: nn.Linear(2, 2).load_state_dict(5), TypeError),
    ("module to an unknown device", lambda m, nn, F: nn.Linear(2, 2).to("foo"), RuntimeError),
    ("conv2d bias dtype", lambda m, nn, F: F.conv2d(m.ones(1, 1, 3, 3), m.ones(1, 1, 3, 3),
                                                    m.ones(1, dtype=m.float64)), RuntimeError),
    ("conv2d input dtype", lambda m, nn, F: F.conv2d(m.ones(1, 1, 3, 3, dtype=m.float64),
                                                     m.ones(1, 1, 3, 3)), RuntimeError),
    ("Linear float features", lambda m, nn, F: nn.Linear(2.5, 2), TypeError),
    ("Embedding negative size", lambda m, nn, F: nn.Embedding(-1, 2), RuntimeError),
    ("LSTM 2-d state", lambda m, nn, F: nn.LSTM(3, 4)(m.ones(5, 2, 3),
                                                      (m.ones(2, 4), m.ones(2, 4))), RuntimeError),
    ("train(str)", lambda m, nn, F: nn.Linear(2, 2).train("x"), ValueError),
    ("module to an int dtype", lambda m, nn, F: nn.Linear(2, 2).to(m.int64), TypeError),
    ("state_dict shape, not strict", lambda m, nn, F: nn.Linear(2, 2).load_state_dict(
        {"weight": m.ones(3, 3)}, strict=False), RuntimeError),
    ("state_dict value not a tensor", lambda m, nn, F: nn.Linear(2, 2).load_state_dict(
        {"weight": 5, "bias": m.ones(2)}), RuntimeError),
    ("module called without input", lambda m, nn, F: nn.Linear(2, 2)(), TypeError),
    ("ModuleDict of an int", lambda m, nn, F: nn.ModuleDict({'a': 5}), TypeError),
    ("Sequential append an int", lambda m, nn, F: nn.Sequential().append(5), TypeError),
    ("Embedding padding_idx", lambda m, nn, F: nn.Embedding(3, 2, padding_idx=5), AssertionError),
    ("Conv2d same and strided", lambda m, nn, F: nn.Conv2d(1, 1, 3, stride=2, padding='same'),
     ValueError),
    ("Conv2d padding_mode", lambda m, nn, F: nn.Conv2d(1, 1, 3, padding_mode='foo'), ValueError),
    ("Conv2d groups 0", lambda m, nn, F: nn.Conv2d(1, 1, 3, groups=0), ValueError),
    ("Flatten dim", lambda m, nn, F: nn.Flatten(3)(_t(m)), IndexError),
    ("MaxPool2d of a vector", lambda m, nn, F: nn.MaxPool2d(2)(m.ones(4)), RuntimeError),
    ("F.log_softmax dim", lambda m, nn, F: F.log_softmax(_t(m), dim=3), IndexError),
    ("F.normalize dim", lambda m, nn, F: F.normalize(_t(m), dim=4), IndexError),
    ("F.gelu approximate", lambda m, nn, F: F.gelu(_t(m), approximate="foo"), RuntimeError),
    ("F.cosine_similarity sizes",
     lambda m, nn, F: F.cosine_similarity(m.ones(2, 3), m.ones(2, 4)), RuntimeError),
    ("F.layer_norm weight shape",
     lambda m, nn, F: F.layer_norm(_t(m), (3,), weight=m.ones(4)), RuntimeError),
    ("F.embedding 1-d weight", lambda m, nn, F: F.embedding(m.tensor([0]), m.ones(3)),
     RuntimeError),
    ("F.dropout2d p", lambda m, nn, F: F.dropout2d(m.ones(1, 2, 2, 2), p=2), ValueError),
    ("F.pixel_shuffle channels", lambda m, nn, F: F.pixel_shuffle(m.ones(1, 3, 2, 2), 2),
     RuntimeError),
    ("F.adaptive_avg_pool2d of a vector", lambda m, nn, F: F.adaptive_avg_pool2d(m.ones(4), 2),
     RuntimeError),
    ("F.unfold kernel", lambda m, nn, F: F.unfold(m.ones(1, 1, 2, 2), 3), RuntimeError),
    ("F.avg_pool2d padding", lambda m, nn, F: F.avg_pool2d(m.ones(1, 1, 4, 4), 2, padding=2),
     RuntimeError),
    ("F.interpolate of a matrix", lambda m, nn, F: F.interpolate(m.ones(2, 2), size=4),
     NotImplementedError),
    ("F.interpolate align_corners with nearest",
     lambda m, nn, F: F.interpolate(m.ones(1, 1, 2, 2), size=4, align_corners=True), ValueError),
    # losses and reductions
    ("nll_loss reduction", lambda m, nn, F: F.nll_loss(m.ones(2, 3), m.tensor([0, 1]),
                                                       reduction="foo"), ValueError),
    ("mse_loss reduction", lambda m, nn, F: F.mse_loss(m.ones(2), m.ones(2), reduction="bad"),
     ValueError),
    ("mse_loss shapes", lambda m, nn, F: F.mse_loss(m.ones(2, 3), m.ones(4, 5)), RuntimeError),
    ("cross_entropy batch", lambda m, nn, F: F.cross_entropy(m.ones(2, 3), m.tensor([0, 1, 2])),
     ValueError),
    ("nll_loss batch", lambda m, nn, F: F.nll_loss(m.ones(2, 3), m.tensor([0, 1, 2])),
     ValueError),
    ("cross_entropy float target", lambda m, nn, F: F.cross_entropy(m.ones(2, 3), m.ones(2)),
     RuntimeError),
    ("cross_entropy reduction",
     lambda m, nn, F: F.cross_entropy(m.ones(2, 3), m.tensor([0, 1]), reduction="x"),
     ValueError),
    ("l1_loss reduction", lambda m, nn, F: F.l1_loss(m.ones(2), m.ones(2), reduction="x"),
     ValueError),
    ("binary_cross_entropy sizes",
     lambda m, nn, F: F.binary_cross_entropy(m.ones(2) / 2, m.ones(3)), ValueError),
    ("bce_with_logits sizes",
     lambda m, nn, F: F.binary_cross_entropy_with_logits(m.ones(2), m.ones(3)), ValueError),
    ("mse_loss of ints",
     lambda m, nn, F: F.mse_loss(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
     RuntimeError),
    ("cross_entropy target of 3-d logits",
     lambda m, nn, F: F.cross_entropy(m.ones(2, 3, 4), m.tensor([0, 1])), RuntimeError),
    ("nll_loss weight size",
     lambda m, nn, F: F.nll_loss(m.ones(2, 3), m.tensor([0, 1]), weight=m.ones(4)), RuntimeError),
    ("kl_div reduction", lambda m, nn, F: F.kl_div(m.ones(2), m.ones(2), reduction="foo"),
     ValueError),
    ("smooth_l1_loss beta", lambda m, nn, F: F.smooth_l1_loss(m.ones(2), m.ones(2), beta=-1),
     RuntimeError),
    ("huber_loss delta", lambda m, nn, F: F.huber_loss(m.ones(2), m.ones(2), delta=-1),
     RuntimeError),
    ("pad mode", lambda m, nn, F: F.pad(m.ones(1, 1, 3, 3), (1, 1), mode="foo"),
     NotImplementedError),
    ("interpolate size and scale",
     lambda m, nn, F: F.interpolate(m.ones(1, 1, 2, 2), size=2, scale_factor=2), ValueError),
    ("interpolate mode", lambda m, nn, F: F.interpolate(m.ones(1, 1, 2, 2), size=4, mode="foo"),
     NotImplementedError),
    # optimizers
    ("SGD lr", lambda m, nn, F: m.optim.SGD([_param(m)], lr=-1), ValueError),
    ("SGD momentum", lambda m, nn, F: m.optim.SGD([_param(m)], lr=0.1, momentum=-1), ValueError),
    ("Adam betas", lambda m, nn, F: m.optim.Adam([_param(m)], betas=(1.5, 0.9)), ValueError),
    ("Adam eps", lambda m, nn, F: m.optim.Adam([_param(m)], eps=-1), ValueError),
    ("SGD no params", lambda m, nn, F: m.optim.SGD([], lr=0.1), ValueError),
    ("SGD a tensor", lambda m, nn, F: m.optim.SGD(_param(m), lr=0.1), TypeError),
    ("SGD nesterov without momentum",
     lambda m, nn, F: m.optim.SGD([_param(m)], lr=0.1, nesterov=True), ValueError),
    ("SGD weight_decay", lambda m, nn, F: m.optim.SGD([_param(m)], lr=0.1, weight_decay=-1),
     ValueError),
    ("Adam lr", lambda m, nn, F: m.optim.Adam([_param(m)], lr=-1), ValueError),
    ("Adam beta2", lambda m, nn, F: m.optim.Adam([_param(m)], betas=(0.9, 1.0)), ValueError),
    ("Adam weight_decay", lambda m, nn, F: m.optim.Adam([_param(m)], weight_decay=-1),
     ValueError),
    ("AdamW eps", lambda m, nn, F: m.optim.AdamW([_param(m)], eps=-1), ValueError),
    ("RMSprop alpha", lambda m, nn, F: m.optim.RMSprop([_param(m)], alpha=-1), ValueError),
    ("RMSprop momentum", lambda m, nn, F: m.optim.RMSprop([_param(m)], momentum=-1), ValueError),
    ("Adadelta rho", lambda m, nn, F: m.optim.Adadelta([_param(m)], rho=1.5), ValueError),
    ("Adagrad lr", lambda m, nn, F: m.optim.Adagrad([_param(m)], lr=-1), ValueError),
    ("optimizer of a non-leaf", lambda m, nn, F: m.optim.SGD([_param(m) * 2], lr=0.1),
     ValueError),
    ("optimizer with a parameter twice", lambda m, nn, F: _same_param_twice(m), ValueError),
    ("optimizer of ints", lambda m, nn, F: m.optim.SGD([1, 2], lr=0.1), TypeError),
    ("optimizer state of other groups", lambda m, nn, F: m.optim.SGD([_param(m)], lr=0.1)
     .load_state_dict({'state': {}, 'param_groups': []}), ValueError),
    ("StepLR of a non-optimizer", lambda m, nn, F: m.optim.lr_scheduler.StepLR(5, 1), TypeError),
    ("add_param_group without params", lambda m, nn, F: _sgd(m).add_param_group({'lr': 0.1}),
     KeyError),
    ("LambdaLR lambdas count", lambda m, nn, F: m.optim.lr_scheduler.LambdaLR(
        _sgd(m), [lambda e: 1, lambda e: 1]), ValueError),
    ("OneCycleLR without steps", lambda m, nn, F: m.optim.lr_scheduler.OneCycleLR(_sgd(m), 1.0),
     ValueError),
    # data
    ("DataLoader batch_size 0", lambda m, nn, F: m.utils.data.DataLoader([1, 2], batch_size=0),
     ValueError),
    ("DataLoader negative workers",
     lambda m, nn, F: m.utils.data.DataLoader([1, 2], num_workers=-1), ValueError),
    ("DataLoader sampler and shuffle",
     lambda m, nn, F: m.utils.data.DataLoader([1, 2], shuffle=True, sampler=[0, 1]), ValueError),
    ("TensorDataset sizes", lambda m, nn, F: m.utils.data.TensorDataset(m.ones(2), m.ones(3)),
     AssertionError),
    ("random_split lengths", lambda m, nn, F: m.utils.data.random_split([1, 2, 3], [1, 1]),
     ValueError),
    # files
    ("save to a missing folder", lambda m, nn, F: m.save({"a": _t(m)}, "/nonexistent/d/x.pt"),
     RuntimeError),
    ("load a missing file", lambda m, nn, F: m.load("/nonexistent/x.pt"), FileNotFoundError),
    ("save over a directory", lambda m, nn, F: m.save({"a": _t(m)}, tempfile.gettempdir()),
     RuntimeError),
    ("load a directory", lambda m, nn, F: m.load(tempfile.gettempdir()), IsADirectoryError),
]

def _raised(case, m, nn, F):
    try:
        case(m, nn, F)
    except Exception as e:  # noqa: BLE001 - the type is what is tested
        return e
    return None


@pytest.mark.parametrize("name,case,expected", CASES, ids=[c[0] for c in CASES])
def test_tensorgraph_raises_pytorchs_type(name, case, expected):
    e = _raised(case, tg, tnn, TF)
    assert e is not None, f"{name}: no error"
    assert type(e) is expected, f"{name}: {type(e).__name__} ({e}), PyTorch raises {expected}"
    assert str(e), f"{name}: an empty message"


@pytest.mark.skipif(torch is None, reason="python3-torch is not installed")
@pytest.mark.skipif(SANITIZED, reason="torch's C++ exceptions abort under the ASan preload")
@pytest.mark.parametrize("name,case,expected", CASES, ids=[c[0] for c in CASES])
def test_the_table_is_pytorchs(name, case, expected):
    import torch.nn
    import torch.nn.functional
    e = _raised(case, torch, torch.nn, torch.nn.functional)
    assert e is not None and type(e) is expected, f"{name}: PyTorch gives {e!r}"


def test_case_names_are_unique():
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names))


def test_clamp_with_min_above_max_gives_max():
    # PyTorch's documented rule, not an error: every element becomes max
    x = [0.0, 5.0, float('nan')]
    y = tg.clamp(tg.tensor(x), 2, 1).tolist()
    assert y[:2] == [1.0, 1.0] and y[2] != y[2]
    if torch is not None and not SANITIZED:
        assert torch.clamp(torch.tensor(x), 2, 1).tolist()[:2] == [1.0, 1.0]


def test_clamp_with_min_above_max_has_no_gradient():
    # PyTorch's mask is min <= x <= max, empty here: x == max gets none
    def run(L):
        x = L.tensor([-1.0, 1.0, 0.0, -2.0, 2.0], requires_grad=True)
        L.clip(x, 1, -1).backward(L.ones(5))
        return x.grad.tolist()
    assert run(tg) == [0.0] * 5
    if torch is not None and not SANITIZED:
        assert run(torch) == [0.0] * 5


def test_clamp_with_a_0d_tensor_beside_a_number_binds_both_as_numbers():
    # PyTorch's overloads are (Tensor, Tensor) and (Number, Number): a 0-d
    # tensor next to a number is read as a number (the number form's
    # dtype); one of more dims, or that requires grad, is a TypeError
    def run(L):
        c, b = L.tensor([1, 2]), L.tensor(0.0, dtype=L.float64)
        f = L.tensor(1.0)
        dts = [str(L.clamp(*a).dtype).split('.')[-1] for a in
               [(c, b, 1), (c, b), (c, b, L.tensor(1)), (f, b, 1), (c, 0.5, b)]]
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            L.clamp(c, L.tensor([0.0]), 1)
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            L.clamp(c, L.tensor(0.5, requires_grad=True), 1)
        x = L.tensor([0.0, 1.0], requires_grad=True)
        y = x.clamp(L.tensor(0.5), 2)
        y.sum().backward()
        return dts, y.tolist(), x.grad.tolist()
    assert run(tg) == (['float32', 'float64', 'float64', 'float32', 'float32'],
                       [0.5, 1.0], [0.0, 1.0])
    if torch is not None and not SANITIZED:
        assert run(torch) == run(tg)


def test_clamp_with_number_bounds_promotes_as_torch():
    # an int tensor clamped to float bounds gives floats (torch 1.13 and 2);
    # clamp_ then cannot write them back into the ints
    def run(L):
        x = L.tensor([1, 2, 3])
        out = [(r.tolist(), str(r.dtype).split('.')[-1]) for r in (
            L.clamp(x, 0.5, 2.5), L.clamp(x, 0, 2), L.clamp(x, None, 2.5),
            L.clamp(x, 1.5, None), L.clamp(L.tensor([True, False]), 0, 1))]
        with pytest.raises(RuntimeError):
            x.clamp_(0.5, 2.5)
        return out
    got = run(tg)
    assert got[0] == ([1.0, 2.0, 2.5], 'float32') and got[1] == ([1, 2, 2], 'int64')
    if torch is not None and not SANITIZED:
        assert got == run(torch)


def test_cosine_similarity_at_zero_and_tiny_vectors_as_torch():
    # PyTorch 1.13 clamps each squared norm outside autograd: a zero
    # vector's gradient is x2 / (eps |x2|), a tiny one's has the norm term
    def run(L):
        out = []
        for a, b in (([[0., 0., 0., 0.]], [[1., 1., 1., 1.]]),
                     ([[1e-9, 0., 0.]], [[1., 1., 0.]]), ([[3., 4.]], [[1e-9, 0.]])):
            x = L.tensor(a, dtype=L.float64, requires_grad=True)
            y = L.tensor(b, dtype=L.float64, requires_grad=True)
            c = L.nn.functional.cosine_similarity(x, y)
            c.sum().backward()
            out.append((c.tolist(), x.grad.tolist(), y.grad.tolist()))
        return out
    got = run(tg)
    assert got[0][1] == [[5e7] * 4]
    if torch is not None and not SANITIZED:
        for g, w in zip(got, run(torch)):
            for a, b in zip(g, w):
                np.testing.assert_allclose(a, b, rtol=1e-12)


def test_adaptive_pooling_to_nothing_is_empty():
    # PyTorch accepts output_size 0 (an empty result); it used to divide by zero here
    y = TF.adaptive_avg_pool2d(tg.ones(1, 2, 4, 4), (0, 3))
    assert tuple(y.shape) == (1, 2, 0, 3)


def test_save_to_missing_folder_writes_nothing():
    with tempfile.TemporaryDirectory() as d:
        with pytest.raises(RuntimeError, match="does not exist"):
            tg.save({"a": tg.ones(2)}, os.path.join(d, "missing", "x.pt"))
        assert os.listdir(d) == []


def test_bool_add_in_place_is_a_logical_or():
    # PyTorch adds bools as a logical or (in place too, += as well); an
    # integer source cannot be written into bools, and bools do not subtract
    x = tg.tensor([True, False, False])
    x.add_(tg.tensor([False, True, False]))
    assert x.tolist() == [True, True, False] and x.dtype == tg.bool
    x += tg.tensor([False, False, True])
    assert x.tolist() == [True, True, True]
    y = tg.tensor([False, False])
    y.add_(tg.tensor([True, False]), alpha=0)
    assert y.tolist() == [False, False]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tg.tensor([True]).add_(tg.tensor([1]))
    with pytest.raises(RuntimeError, match="Subtraction"):
        tg.tensor([True]).sub_(tg.tensor([True]))


def test_glu_over_an_empty_dim():
    x = tg.ones(1, 3, 0, requires_grad=True)
    y = tg.nn.functional.glu(x)
    assert tuple(y.shape) == (1, 3, 0)
    y.sum().backward()
    assert tuple(x.grad.shape) == (1, 3, 0)
