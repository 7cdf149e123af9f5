"""Rewriting statements and expressions into calls of the runtime operators.

After lowering (no jumps left) and liveness (analysis.annotate), each
`if`, `while` and `for` becomes functions over its state plus one call:

    if x > 0:                      def ag__if_true_1(y):
        y = x * 2                      y = x * 2
    else:                              return (y,)
        y = -x              ->     def ag__if_false_1(y):
                                       y = -x
                                       return (y,)
                                   y = ag__.ld(lambda: y, 'y')
                                   (y,) = ag__.if_stmt(x > 0, ag__if_true_1, ag__if_false_1,
                                                       (y,), ('y',))

The operators decide at run time: a symbolic tensor condition makes graph
control flow, anything else runs as Python. `and`, `or`, `not`, `a if c
else b` and chained comparisons become operator calls too (lazily, as
Python evaluates them), and every call `f(...)` becomes `ag__.cc(f)(...)`,
which converts f first when it is user code.

Nested function definitions, lambdas and classes are left as they are:
their functions are converted when the converted code calls them.
"""
import ast

from . import analysis
from .lowering import name

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_UNTOUCHED_CALLS = {'super', 'locals', 'globals', 'vars', 'eval', 'exec'}


def _ag(attr):
    return ast.Attribute(value=name('ag__'), attr=attr, ctx=ast.Load())


def _call(attr, *args):
    return ast.Call(func=_ag(attr), args=list(args), keywords=[])


def _thunk(expr):
    return ast.Lambda(args=_no_args(), body=expr)


def _no_args(params=()):
    return ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def _tuple(names, store=False):
    return ast.Tuple(elts=[name(n, store) for n in names],
                     ctx=ast.Store() if store else ast.Load())


def _strs(names):
    return ast.Tuple(elts=[ast.Constant(value=n) for n in names], ctx=ast.Load())


class Expressions(ast.NodeTransformer):
    """and/or/not, conditional expressions, chained comparisons and calls."""

    def __init__(self, self_param):
        self.self_param = self_param  # the method's first parameter, for super()

    def visit_Lambda(self, node):
        return node  # converted when called

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        op = 'and_' if isinstance(node.op, ast.And) else 'or_'
        expr = node.values[-1]
        for v in reversed(node.values[:-1]):
            expr = _call(op, _thunk(v), _thunk(expr))
        return _located(expr, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _located(_call('not_', node.operand), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return _located(_call('if_exp', node.test, _thunk(node.body),
                                       _thunk(node.orelse)), node)

    def visit_Compare(self, node):
        self.generic_visit(node)
        simple = all(isinstance(c, (ast.Name, ast.Constant, ast.Attribute))
                     for c in node.comparators[:-1])
        if len(node.ops) < 2 or not simple:
            return node
        # a < b < c is (a < b) and (b < c), each a tensor comparison maybe
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(ast.Compare(left=left, ops=[op], comparators=[right]))
            left = right
        expr = parts[-1]
        for p in reversed(parts[:-1]):
            expr = _call('and_', _thunk(p), _thunk(expr))
        return _located(expr, node)

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in _UNTOUCHED_CALLS:
            if f.id == 'super' and not node.args and self.self_param:
                # zero-argument super() reads the frame's first argument: in a
                # generated function that would be a state variable
                node.args = [name('__class__'), name(self.self_param)]
            return node
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == 'ag__':
            return node
        node.func = _located(_call('cc', f), f)
        return node


class Statements:
    """Converts the statement lists of one function (see the module doc)."""

    def __init__(self, names, outside, self_param):
        self.names = names          # fresh generated names
        self.outside = outside      # {name: ast.Global/Nonlocal}: never state
        self.expr = Expressions(self_param)

    def block(self, stmts, defined):
        out, defined = [], set(defined)
        for s in stmts:
            out.extend(self.statement(s, defined))
            defined |= _definitely_written(s)
        return out

    def statement(self, s, defined):
        if isinstance(s, ast.If):
            return self._if(s, defined)
        if isinstance(s, ast.While):
            return self._while(s, defined)
        if isinstance(s, ast.For):
            return self._for(s, defined)
        if isinstance(s, _SCOPES):
            return [s]
        if isinstance(s, (ast.With, ast.Try)):
            for it in getattr(s, 'items', []):
                self.expr.visit(it)
            for f in ('body', 'orelse', 'finalbody'):
                if isinstance(getattr(s, f, None), list):
                    setattr(s, f, self.block(getattr(s, f), defined))
            for h in getattr(s, 'handlers', []):
                h.body = self.block(h.body, defined)
            return [s]
        if isinstance(s, ast.Return) and s.value is not None and not _is_retval_call(s.value):
            s.value = ast.copy_location(_call('retval', self.expr.visit(s.value)), s.value)
            return [s]
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            # x += v: in place for concrete values, as Python does; a symbolic
            # tensor cannot change in place (graphs are functional), so it
            # rebinds x to x + v, as TensorFlow's immutable tensors do
            op = ast.Constant(value=type(s.op).__name__)
            value = _call('aug_assign', op, name(s.target.id), self.expr.visit(s.value))
            return [ast.copy_location(ast.Assign(targets=[name(s.target.id, True)], value=value),
                                      s)]
        return [self.expr.visit(s)]

    def _state(self, modified, live):
        return sorted((modified - set(self.outside)) & live)

    def _function(self, fname, params, body, results, at):
        # the function's global / nonlocal declarations hold in the generated
        # functions that assign those names
        written = analysis.writes(body)
        decl = [kind(names=[n]) for n, kind in sorted(self.outside.items()) if n in written]
        ret = ast.Return(value=_tuple(results))
        fn = ast.FunctionDef(name=fname, args=_no_args(params),
                             body=decl + body + [ret],
                             decorator_list=[], returns=None, type_comment=None)
        return _located(fn, at)

    def _undefined_guards(self, state, defined, at):
        """state variables that may be unassigned here get an Undefined value"""
        return [_located(ast.Assign(targets=[name(v, True)],
                                    value=_call('ld', _thunk(name(v)), ast.Constant(value=v))),
                         at)
                for v in state if v not in defined]

    def _if(self, s, defined):
        state = self._state(analysis.writes(s.body + s.orelse), s.ag_live_out | s.ag_live_in)
        test = self.expr.visit(s.test)
        inner = defined | set(state)
        t, f = self.names.fresh('ag__if_true'), self.names.fresh('ag__if_false')
        defs = [self._function(t, state, self.block(s.body, inner), state, s),
                self._function(f, state, self.block(s.orelse, inner), state, s)]
        call = _call('if_stmt', test, name(t), name(f), _tuple(state), _strs(state))
        return defs + self._undefined_guards(state, defined, s) + [_bind(state, call, s)]

    def _while(self, s, defined):
        state = self._state(analysis.writes(s.body), s.ag_live_in)
        inner = defined | set(state)
        t, b = self.names.fresh('ag__loop_test'), self.names.fresh('ag__loop_body')
        test = _located(ast.FunctionDef(name=t, args=_no_args(state),
                                        body=[ast.Return(value=self.expr.visit(s.test))],
                                        decorator_list=[], returns=None, type_comment=None), s)
        body = self._function(b, state, self.block(s.body, inner), state, s)
        call = _call('while_stmt', name(t), name(b), _tuple(state), _strs(state))
        return [test, body] + self._undefined_guards(state, defined, s) + [_bind(state, call, s)]

    def _for(self, s, defined):
        target = analysis.writes(s.target)
        state = self._state(analysis.writes(s.body) | target, s.ag_live_in | s.ag_live_out)
        inner = defined | set(state) | target
        b = self.names.fresh('ag__for_body')
        itr = b.replace('body', 'item')
        unpack = _located(ast.Assign(targets=[s.target], value=name(itr)), s)
        body = self._function(b, [itr] + state, [unpack] + self.block(s.body, inner), state, s)
        defs, extra = [body], ast.Constant(value=None)
        tests = getattr(s, 'ag_extra_test', [])
        if tests:
            e = self.names.fresh('ag__for_test')
            cond = tests[0] if len(tests) == 1 else ast.BoolOp(op=ast.And(), values=tests)
            defs.append(_located(ast.FunctionDef(name=e, args=_no_args(state),
                                                 body=[ast.Return(value=self.expr.visit(cond))],
                                                 decorator_list=[], returns=None,
                                                 type_comment=None), s))
            extra = name(e)
        call = _call('for_stmt', self.expr.visit(s.iter), extra, name(b), _tuple(state),
                     _strs(state))
        return defs + self._undefined_guards(state, defined, s) + [_bind(state, call, s)]


def _is_retval_call(e):
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and \
        e.func.attr == 'retval' and isinstance(e.func.value, ast.Name) and \
        e.func.value.id == 'ag__'


def _bind(state, call, at):
    if not state:
        return _located(ast.Expr(value=call), at)
    return _located(ast.Assign(targets=[_tuple(state, True)], value=call), at)


def _located(node, at):
    """node and every generated node under it get at's position (errors and
    tracebacks then point at the user's statement)."""
    if not hasattr(at, 'lineno'):  # generated itself: located by its statement
        return node
    for n in ast.walk(node):
        if 'lineno' in n._attributes and not hasattr(n, 'lineno'):
            # one line: a call's line is where its callee ends, so a range
            # ending at the statement's last line would report that line
            n.lineno, n.end_lineno = at.lineno, at.lineno
            n.col_offset, n.end_col_offset = at.col_offset, at.col_offset
    return node


def _definitely_written(s):
    if isinstance(s, ast.If):
        return _block_written(s.body) & _block_written(s.orelse)
    if isinstance(s, (ast.While, ast.For, ast.Try)):
        return set()
    if isinstance(s, ast.With):
        return _block_written(s.body) | analysis.writes([i.optional_vars for i in s.items
                                                         if i.optional_vars])
    return analysis.writes(s)


def _block_written(stmts):
    out = set()
    for s in stmts:
        out |= _definitely_written(s)
    return out
