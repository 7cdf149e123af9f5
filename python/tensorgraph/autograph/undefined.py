"""Values of variables that are not assigned yet.

Converted code passes every branch or loop variable to the functions it
made, assigned or not; an unassigned one travels as an Undefined, which
fails as Python would (UnboundLocalError) as soon as it is used.
"""


class Undefined:
    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<undefined {self.name}>"

    def _fail(self, *args, **kwargs):
        raise UnboundLocalError(f"local variable '{self.name}' is used before it is assigned")

    def __getattr__(self, attr):
        self._fail()


for _m in ('bool', 'len', 'iter', 'call', 'getitem', 'setitem', 'index', 'int', 'float',
           'add', 'radd', 'sub', 'rsub', 'mul', 'rmul', 'truediv', 'rtruediv', 'floordiv',
           'rfloordiv', 'mod', 'rmod', 'pow', 'rpow', 'matmul', 'rmatmul', 'neg', 'pos', 'abs',
           'invert', 'and', 'rand', 'or', 'ror', 'xor', 'rxor', 'lt', 'le', 'gt', 'ge'):
    setattr(Undefined, f'__{_m}__', Undefined._fail)


class UndefinedReturnValue(Undefined):
    """The value of a function that has not returned yet (its flag says
    so; conversion never lets it be read)."""
    __slots__ = ()

    def __init__(self):
        super().__init__('return value')


def ld(read, name):
    """read() (a closure reading a local), or Undefined(name) if unassigned."""
    try:
        return read()
    except NameError:
        return Undefined(name)


def retval(value):
    """What a converted function returns: None if it fell off its end; an
    unassigned variable fails as Python fails reading it."""
    if isinstance(value, UndefinedReturnValue):
        return None
    for v in value if isinstance(value, tuple) else (value,):
        if isinstance(v, Undefined):
            v._fail()
    return value
