"""Lowering `return`, `break` and `continue` to flag variables.

A branch or a loop body becomes a function and a loop becomes one
while_loop op, so no statement may jump out of them. As TF AutoGraph does,
each jump sets a flag (`ag__do_return`, `ag__break_N`, `ag__continue_N`),
the statements after it in every enclosing block run only `if not flag`,
and loops also test `not flag`. The flags are ordinary variables: with a
tensor condition they become booleans of the graph.

Before that, `if c: ...; return a` followed by more statements is rewritten
so the rest is the `else` of the `if` (what Python means anyway): then the
returned value is defined in both branches, which a graph needs.
"""
import ast
import copy

from .errors import ConversionError

_LOOPS = (ast.While, ast.For)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class Names:
    """Fresh generated names, numbered per converted function."""

    def __init__(self):
        self.n = 0

    def fresh(self, base):
        self.n += 1
        return f"{base}_{self.n}"


def name(id_, store=False):
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def assign(id_, value, at):
    return ast.copy_location(ast.Assign(targets=[name(id_, True)], value=value), at)


def not_flag(flag):
    return ast.UnaryOp(op=ast.Not(), operand=name(flag))


def _blocks(stmt):
    """The statement lists directly inside stmt (attribute names)."""
    return [f for f in ('body', 'orelse', 'finalbody') if isinstance(getattr(stmt, f, None), list)]


def _contains(node, kinds, into_loops):
    """node holds a statement of kinds in its own function (and, unless
    into_loops is false, outside nested loops)."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, kinds):
            return True
        if isinstance(n, _SCOPES) or (n is not node and not into_loops and isinstance(n, _LOOPS)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


# ---- if ...: return a  (rest)  ->  if ...: return a  else: (rest) ----------------------
def _always_leaves(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    return isinstance(last, ast.If) and _always_leaves(last.body) and _always_leaves(last.orelse)


def canonicalize_returns(stmts):
    """An `if` holding a return, followed by more statements: the rest goes
    into each of its branches that can fall through (copied), recursively,
    so that every path ends in its own return where possible."""
    out = []
    for i, s in enumerate(stmts):
        if not isinstance(s, _SCOPES):
            for f in _blocks(s):
                setattr(s, f, canonicalize_returns(getattr(s, f)))
            for h in getattr(s, 'handlers', []):
                h.body = canonicalize_returns(h.body)
        out.append(s)
        rest = stmts[i + 1:]
        if isinstance(s, (ast.Return, ast.Raise)):
            return out  # what follows never runs
        if isinstance(s, ast.If) and rest and _contains(s, ast.Return, False):
            for f in ('body', 'orelse'):
                if not _always_leaves(getattr(s, f)):
                    setattr(s, f, canonicalize_returns(getattr(s, f) + copy.deepcopy(rest)))
            return out
    return out


# ---- the generic rewrite: a jump sets a flag, the rest of each block is guarded --------
def _refuse_in(stmt, kinds, filename):
    """A jump out of a try block cannot become a flag (an `else` clause or a
    handler would run when Python's jump skips it): refused, at its line."""
    what = {ast.Return: 'return', ast.Break: 'break', ast.Continue: 'continue'}
    for sub in ast.walk(stmt):
        if isinstance(sub, kinds):
            raise ConversionError(f"tg.function cannot convert a '{what[type(sub)]}' inside a "
                                  "'try' block of a function it rewrites; move it out of the "
                                  "try block (or mark the function tg.autograph.do_not_convert)",
                                  filename, sub.lineno)


def lower_block(stmts, kinds, flag, into_loops, set_flag, filename):
    """Rewrites every jump of kinds in stmts (into nested loops only if
    into_loops) as set_flag(jump) and guards what follows it."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, kinds):
            out.extend(set_flag(s))
            return out  # the rest of this block is dead
        holds = _contains(s, kinds, into_loops) and not isinstance(s, _SCOPES)
        if holds:
            if isinstance(s, ast.Try):
                _refuse_in(s, kinds, filename)
            if not isinstance(s, _LOOPS) or into_loops:
                for f in _blocks(s):
                    setattr(s, f, lower_block(getattr(s, f), kinds, flag, into_loops, set_flag,
                                              filename))
        out.append(s)
        rest = stmts[i + 1:]
        if holds and rest:
            guarded = lower_block(rest, kinds, flag, into_loops, set_flag, filename)
            out.append(ast.copy_location(ast.If(test=not_flag(flag), body=guarded, orelse=[]),
                                         rest[0]))
            return out
    return out


def _add_loop_test(loop, flag):
    """The loop also stops once flag is set (tested before its own test)."""
    if isinstance(loop, ast.While):
        loop.test = ast.BoolOp(op=ast.And(), values=[not_flag(flag), loop.test])
    else:
        loop.ag_extra_test = getattr(loop, 'ag_extra_test', []) + [not_flag(flag)]


# ---- returns ------------------------------------------------------------------------------
RETURN_FLAG, RETURN_VALUE = 'ag__do_return', 'ag__retval'


def lower_returns(fn, filename):
    """All returns of fn become flag + value assignments, unless fn's only
    return is its last statement."""
    fn.body = canonicalize_returns(fn.body)
    returns = [n for n in _own_nodes(fn) if isinstance(n, ast.Return)]
    if not returns or (len(returns) == 1 and fn.body[-1] is returns[0]):
        return

    def set_flag(ret):
        value = ret.value if ret.value is not None else ast.Constant(value=None)
        return [assign(RETURN_FLAG, ast.Constant(value=True), ret),
                assign(RETURN_VALUE, value, ret)]

    _mark_loops_holding(fn.body, ast.Return, RETURN_FLAG)
    body = lower_block(fn.body, ast.Return, RETURN_FLAG, True, set_flag, filename)
    first = fn.body[0]
    undefined = ast.Call(func=ast.Attribute(value=name('ag__'), attr='UndefinedReturnValue',
                                            ctx=ast.Load()), args=[], keywords=[])
    result = ast.Call(func=ast.Attribute(value=name('ag__'), attr='retval', ctx=ast.Load()),
                      args=[name(RETURN_VALUE)], keywords=[])
    fn.body = [assign(RETURN_FLAG, ast.Constant(value=False), first),
               assign(RETURN_VALUE, undefined, first)] + body + \
        [ast.copy_location(ast.Return(value=result), fn.body[-1])]


def _own_nodes(fn):
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def _mark_loops_holding(stmts, kinds, flag):
    for s in stmts:
        if isinstance(s, _SCOPES):
            continue
        if isinstance(s, _LOOPS) and _contains(s, kinds, True):
            _add_loop_test(s, flag)
        for f in _blocks(s):
            _mark_loops_holding(getattr(s, f), kinds, flag)
        for h in getattr(s, 'handlers', []):
            _mark_loops_holding(h.body, kinds, flag)


# ---- break and continue -----------------------------------------------------------------
def lower_loops(stmts, names, filename):
    """Lowers break/continue of every loop in stmts (inner loops first);
    returns the new statement list (a loop with break gains a flag before
    it and its else clause after it)."""
    out = []
    for s in stmts:
        if isinstance(s, _SCOPES):
            out.append(s)
            continue
        for f in _blocks(s):
            setattr(s, f, lower_loops(getattr(s, f), names, filename))
        for h in getattr(s, 'handlers', []):
            h.body = lower_loops(h.body, names, filename)
        out.extend(_lower_loop(s, names, filename) if isinstance(s, _LOOPS) else [s])
    return out


def _lower_loop(loop, names, filename):
    before, after = [], list(loop.orelse)
    loop.orelse = []
    if any(_contains(s, ast.Continue, False) for s in loop.body):
        flag = names.fresh('ag__continue')
        loop.body = [assign(flag, ast.Constant(value=False), loop.body[0])] + lower_block(
            loop.body, ast.Continue, flag, False,
            lambda j: [assign(flag, ast.Constant(value=True), j)], filename)
    if any(_contains(s, ast.Break, False) for s in loop.body):
        flag = names.fresh('ag__break')
        before = [assign(flag, ast.Constant(value=False), loop)]
        loop.body = lower_block(loop.body, ast.Break, flag, False,
                                lambda j: [assign(flag, ast.Constant(value=True), j)], filename)
        _add_loop_test(loop, flag)
        if after:  # a loop's else runs when it ends without break
            after = [ast.copy_location(ast.If(test=not_flag(flag), body=after, orelse=[]),
                                       after[0])]
    return before + [loop] + after


def lower(fn, names, filename):
    """All jumps of function node fn lowered to flags (in place)."""
    # loops first: a loop's else clause moves after it, where a return in
    # the loop then guards it as it guards any statement after the loop
    fn.body = lower_loops(fn.body, names, filename)
    lower_returns(fn, filename)
    return fn
