"""Named tuples that ops return, as torch.return_types: named after the
op (type(x.max(1)).__name__ is 'max'), printed as PyTorch prints them."""
from collections import namedtuple


def _return_type(name, fields):
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ',\n'.join(f'{f}={v!r}' for f, v in zip(self._fields, self))
        return f'tensorgraph.return_types.{name}(\n{body})'
    return type(name, (base,), {'__slots__': (), '__repr__': __repr__,
                                '__module__': 'tensorgraph.return_types'})


max = _return_type('max', ['values', 'indices'])  # noqa: A001
min = _return_type('min', ['values', 'indices'])  # noqa: A001
cummax = _return_type('cummax', ['values', 'indices'])
cummin = _return_type('cummin', ['values', 'indices'])
ValuesIndices = _return_type('ValuesIndices', ['values', 'indices'])
topk = _return_type('topk', ['values', 'indices'])
sort = _return_type('sort', ['values', 'indices'])
MinMax = aminmax = _return_type('aminmax', ['min', 'max'])
median = _return_type('median', ['values', 'indices'])
nanmedian = _return_type('nanmedian', ['values', 'indices'])
kthvalue = _return_type('kthvalue', ['values', 'indices'])
slogdet = _return_type('slogdet', ['sign', 'logabsdet'])
mode = _return_type('mode', ['values', 'indices'])
histogram = _return_type('histogram', ['hist', 'bin_edges'])
frexp = _return_type('frexp', ['mantissa', 'exponent'])
lu_unpack = _return_type('lu_unpack', ['P', 'L', 'U'])
