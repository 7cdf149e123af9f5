"""Which names statements read and write, and which are live where.

Conversion turns a branch or a loop body into a function whose parameters
and results are the branch's or loop's state: the variables it assigns that
are read afterwards (or, for a loop, in a later iteration). `annotate`
computes that liveness backwards over the structured statements of one
function and leaves on each `if`, `while` and `for` the sets conversion
needs (`ag_live_out`, `ag_live_in`). It runs after returns, breaks and
continues have been lowered to flags, so control only leaves a statement at
its end.
"""
import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def reads(node):
    """Names loaded anywhere in node, nested scopes included (a closure
    reads what it uses)."""
    if node is None:
        return set()
    nodes = node if isinstance(node, list) else [node]
    out = set()
    for n in nodes:
        for sub in ast.walk(n):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                out.add(sub.id)
            elif isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
                out.add(sub.target.id)
    return out


def writes(node):
    """Names bound in node's own scope (assignments, loop targets, imports,
    definitions, `with ... as`, `except ... as`), not inside nested scopes."""
    out = set()
    _collect_writes(node, out)
    return out


def _collect_writes(node, out):
    if isinstance(node, list):
        for n in node:
            _collect_writes(n, out)
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        out.add(node.id)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        out.add(node.name)
        return
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        out.update((a.asname or a.name).split('.')[0] for a in node.names)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        out.add(node.name)
    if isinstance(node, _SCOPES):
        return
    for child in ast.iter_child_nodes(node):
        _collect_writes(child, out)


def declared_outside(fn_node):
    """Names a function declares global or nonlocal (never loop or branch
    state: they live outside the function): {name: ast.Global or ast.Nonlocal}."""
    out = {}
    for sub in _walk_own_scope(fn_node.body):
        if isinstance(sub, (ast.Global, ast.Nonlocal)):
            out.update((n, type(sub)) for n in sub.names)
    return out


def _walk_own_scope(stmts):
    todo = list(stmts)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def annotate(stmts, live_out):
    """Liveness of a block: returns the names live at its start, and marks
    every compound statement in it (recursively)."""
    live = set(live_out)
    for stmt in reversed(stmts):
        live = _live_in(stmt, live)
    return live


def _live_in(stmt, out):
    if isinstance(stmt, ast.If):
        body, orelse = annotate(stmt.body, out), annotate(stmt.orelse, out)
        stmt.ag_live_out, stmt.ag_live_in = set(out), body | orelse
        return reads(stmt.test) | body | orelse
    if isinstance(stmt, ast.While):
        head = set(out) | reads(stmt.test)
        while True:  # a fixed point: what the next iteration reads is live at the end
            new = set(out) | reads(stmt.test) | annotate(stmt.body, head)
            if new == head:
                break
            head = new
        stmt.ag_live_out, stmt.ag_live_in = set(out), head
        return head
    if isinstance(stmt, ast.For):
        target = writes(stmt.target)
        head = set(out)
        while True:
            new = set(out) | (annotate(stmt.body, head) - target)
            if new == head:
                break
            head = new
        stmt.ag_live_out, stmt.ag_live_in = set(out), head
        return head | reads(stmt.iter)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        inner = annotate(stmt.body, out)
        return (inner - writes([i.optional_vars for i in stmt.items if i.optional_vars])) \
            | reads([i.context_expr for i in stmt.items])
    if isinstance(stmt, ast.Try):
        # any statement of the body may jump to a handler: everything they
        # and the code after read is live throughout
        after = annotate(stmt.finalbody, out)
        handlers = set()
        for h in stmt.handlers:
            handlers |= annotate(h.body, after) | reads(h.type)
        orelse = annotate(stmt.orelse, after)
        return annotate(stmt.body, orelse | handlers | after) | handlers | after
    return (out - writes(stmt)) | reads(stmt)
