"""Programs with data-dependent control flow, shared by the autograph tests:
each runs as plain Python (the reference, eager), converted eagerly, and
converted + compiled by tg.function. Kept in their own module so the tests
convert them from real source."""
import tensorgraph as tg
import tensorgraph.nn as nn

END = 0  # the greedy decoder's end token


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-9 * a:
        x = 0.5 * (x + a / x)
    return x


def piecewise(x):
    if x < -1:
        y = -2 * x - 1
    elif x < 1:
        y = x * x
    elif x < 3:
        return 2 * x - 1
    else:
        y = x * 0 + 5
    return y * 3


def sum_until_negative(xs):
    total = xs[0] * 0
    for x in xs:
        if x < 0:
            break
        total = total + x * x
    return total


def power_loop(x, n):
    y = x * 0 + 1
    for i in range(n):
        y = y * x + i
    return y


def greedy_decode(h, w, emb, max_len):
    """argmax tokens from a tiny recurrent cell until END (or max_len);
    returns the number of tokens and a score that depends on h, w, emb."""
    score = (h * 0).sum()
    length = 0
    tok = tg.argmax(h @ w)
    while tok != END and length < max_len:
        h = tg.tanh(h @ w + emb.index_select(0, tok.reshape(1)).squeeze(0))
        score = score + h.max()
        tok = tg.argmax(h @ w)
        length += 1
    return length, score


def clipped_steps(x, limit):
    """continue and a for over a tensor with a tensor condition inside"""
    acc = x[0] * 0
    for v in x:
        if v > limit:
            continue
        acc = acc + v
    return acc


def first_index_over(xs, bound):
    """return from inside a loop over a tensor, else a value after it"""
    i = 0
    for v in xs:
        if v > bound:
            return v * 10 + i
        i += 1
    return xs.sum()


def and_or(x, y):
    if x > 0 and y > 0:
        r = x * y
    elif x > 0 or not y < 0:
        r = x - y
    else:
        r = x + y
    return r


def conditional_expression(x):
    return x * 2 if x > 0 else x * x


def chained(x):
    if -1 < x < 1:
        return x * 2
    return x


class Gate(nn.Module):
    """forward: a while loop until the activation's norm drops below 1"""

    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n).double()

    def forward(self, x):
        steps = 0
        while x.norm() > 1.0 and steps < 20:
            x = tg.tanh(self.lin(x)) * 0.9
            steps += 1
        return x, steps


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        if x.sum() > 0:
            return x * self.k
        return helper_negative(x)


def helper_negative(x):
    """called by Scaler.apply: converted too (nested conversion)"""
    while x.sum() < 0:
        x = x + 1
    return x


def outer_calls_inner(x):
    return helper_negative(x) * 2


def stepped_range(x, start, stop):
    s = x * 0
    for i in range(start, stop, 2):
        s = s + x * i
    return s


def best_row(m):
    """for over a matrix's rows with a tensor condition inside"""
    best = m[0]
    for r in m:
        if r.sum() > best.sum():
            best = r
    return best


def decode_tokens(h, w, max_len):
    """a growing output: the tokens so far, carried with an unknown length"""
    toks = tg.zeros(0, dtype=w.dtype)
    n = 0
    tok = tg.argmax(h @ w)
    while tok != END and n < max_len:
        toks = tg.cat([toks, (h @ w).max().reshape(1)])
        h = tg.tanh(h @ w + 0.1 * tok)
        tok = tg.argmax(h @ w)
        n += 1
    return toks.sum(), n
