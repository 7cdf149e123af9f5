"""Named tuples that ops return, as torch.return_types."""
from collections import namedtuple

ValuesIndices = namedtuple('ValuesIndices', ['values', 'indices'])
MinMax = namedtuple('aminmax', ['min', 'max'])
