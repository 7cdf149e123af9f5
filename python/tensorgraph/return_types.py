"""Named tuples that ops return, as torch.return_types."""
from collections import namedtuple

ValuesIndices = namedtuple('ValuesIndices', ['values', 'indices'])
topk = namedtuple('topk', ['values', 'indices'])
sort = namedtuple('sort', ['values', 'indices'])
MinMax = namedtuple('aminmax', ['min', 'max'])
median = namedtuple('median', ['values', 'indices'])
nanmedian = namedtuple('nanmedian', ['values', 'indices'])
kthvalue = namedtuple('kthvalue', ['values', 'indices'])
slogdet = namedtuple('slogdet', ['sign', 'logabsdet'])
mode = namedtuple('mode', ['values', 'indices'])
