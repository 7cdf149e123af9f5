#!/usr/bin/env python3
"""Generates tests/null_args_calls.inc: for every public function declared
in include/tg/*.h that takes a pointer, one call per pointer parameter with
that parameter NULL and every other argument valid (fixtures of
tests/test_null_args.c). The declarations are read from the preprocessed
umbrella header (as scripts/check_exports.sh reads them), so a function
added to a header is covered once this is rerun.

usage: gen_null_args.py [--check] [include-dir] [output]
  --check: exit 1 when the output file is not what would be generated
           (the test null_args_fresh runs this)."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# the valid argument for each pointer type (after dropping const)
VALID = {
    "tg_tensor *": "fx->t",
    "tg_tensor *const *": "fx->ts",
    "tg_tensor **": "fx->outs",
    "char *": "fx->buf",
    "char *const *": "fx->names",
    "int64_t *": "fx->shape",
    "int *": "fx->ints",
    "double *": "fx->dbls",
    "void *": "fx->buf",
    "tg_module *": "fx->m",
    "tg_module *const *": "NULL",  # consumed: see CONSUMED
    "tg_generator *": "fx->gen",
    "tg_state_dict *": "fx->sd",
    "tg_state_dict **": "fx->sd_out",
    "tg_graph *": "fx->g",
    "tg_session *": "fx->s",
    "tg_optimizer *": "fx->opt",
    "tg_lr_scheduler *": "fx->sched",
    "tg_dataset *": "fx->ds",
    "tg_dataset_impl *": "&fx_dataset_impl",
    "tg_loader *": "fx->loader",
    "tg_loader_options *": "&fx->loader_opts",
    "tg_onnx_model *": "fx->onnx",
    "tg_onnx_net *": "fx->net",
    "tg_onnx_opts *": "&fx->onnx_opts",
    "tg_onnx_value_info *": "&fx->value_info",
    "tg_named_tensor *": "fx->named",
    "tg_named_tensor **": "&fx->named_out",
    "tg_memory_stats *": "&fx->mem_stats",
    "tg_session_stats *": "&fx->session_stats",
    "tg_kv *": "fx->kv",
    "tg_function *": "&fx_function",
    "tg_function_ctx *": "NULL",  # exists only inside a custom function
    "tg_grad_node *": "fx->node",
    "tg_grad_node **": "&fx->node_out",
    "tg_sgd_opts *": "&fx->sgd_opts",
    "tg_adam_opts *": "&fx->adam_opts",
    "tg_adadelta_opts *": "&fx->adadelta_opts",
    "tg_rmsprop_opts *": "&fx->rmsprop_opts",
    "tg_conv2d_opts *": "&fx->conv_opts",
    "tg_pool2d_opts *": "&fx->pool_opts",
    "tg_conv_transpose2d_opts *": "&fx->convt_opts",
    "tg_conv1d_opts *": "&fx->conv1_opts",
    "tg_conv_transpose1d_opts *": "&fx->convt1_opts",
    "tg_pool1d_opts *": "&fx->pool1_opts",
    "tg_conv3d_opts *": "&fx->conv3_opts",
    "tg_conv_transpose3d_opts *": "&fx->convt3_opts",
    "tg_pool3d_opts *": "&fx->pool3_opts",
    "tg_nll_opts *": "&fx->nll_opts",
    "tg_gradcheck_opts *": "&fx->gradcheck_opts",
    "tg_pass_record *": "fx->pass_records",
    "tg_session_options *": "&fx->session_opts",
    "tg_device *": "(tg_device[64]){{TG_CPU, 0, 0}}",
    "FILE *": "fx->file",
    # function pointers (typedefs and spelled out)
    "tg_trace_fn": "fx_trace",
    "tg_jvp_fn": "fx_trace",
    "tg_gradcheck_fn": "fx_gradcheck",
    "tg_module_forward_fn": "fx_forward",
    "tg_data_log_fn": "fx_log",
    "tg_grad_node_hook": "fx_node_hook",
    "void (*)(void *)": "fx_free_nothing",
}
FUNCTION_POINTER_TYPEDEFS = {"tg_trace_fn", "tg_jvp_fn", "tg_gradcheck_fn",
                             "tg_module_forward_fn", "tg_data_log_fn", "tg_grad_node_hook"}
# values for the other (non-pointer) parameters
SCALAR = {"int": "1", "double": "1.0", "_Bool": "false", "bool": "false",
          "tg_dtype": "TG_FLOAT32", "int64_t": "1", "uint64_t": "1", "size_t": "64",
          "tg_reduction": "TG_REDUCTION_MEAN", "tg_pad_mode": "TG_PAD_REFLECT", "tg_status": "TG_OK",
          "tg_executor_kind": "TG_EXECUTOR_SERIAL", "tg_onnx_mode": "TG_ONNX_EAGER",
          "tg_interp_mode": "TG_INTERP_NEAREST", "tg_device": "(tg_device){TG_CPU, 0, 0}"}
SCALAR_BY_NAME = {"ndim": "2", "axis": "0", "dim": "0", "i": "0", "index": "0",
                  "start_axis": "0", "end_axis": "1"}
# arguments the callee takes ownership of: a fresh object each call
CONSUMED = {("tg_module_add", "child"), ("tg_nn_sequential_append", "child")}
# returned objects the caller frees, by return type
FREE_RETURN = {
    "tg_module *": "tg_module_free", "tg_optimizer *": "tg_optim_free",
    "tg_graph *": "tg_graph_free", "tg_state_dict *": "tg_state_dict_free",
    "tg_dataset *": "tg_dataset_free", "tg_lr_scheduler *": "tg_sched_free",
    "tg_onnx_model *": "tg_onnx_free", "tg_session *": "tg_session_free",
    "tg_generator *": "tg_generator_free", "tg_loader *": "tg_loader_free",
    "tg_onnx_net *": "tg_onnx_net_free", "tg_grad_node *": "tg_grad_node_release",
}
# functions returning a malloc'd string
MALLOCED_STRING = {"tg_to_string", "tg_module_to_string"}
# returned pointers that are borrowed (no free): everything else
PATHISH = re.compile(r"path|dir|file", re.I)
MISSING = set()


def declarations(include):
    cc = os.environ.get("CC", "cc")
    text = subprocess.run([cc, "-E", "-P", "-I", include, os.path.join(include, "tg/tg.h")],
                          check=True, capture_output=True, text=True).stdout
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    stmts, depth, cur = [], 0, []
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        cur.append(ch)
        if ch == ";" and depth == 0:
            stmts.append(" ".join("".join(cur).split()))
            cur = []
    for s in stmts:
        if s.startswith("typedef") or "{" in s:
            continue
        m = re.match(r"^(?:extern\s+)?(.*?)\b(tg_\w+)\s*\((.*)\)\s*;$", s)
        if not m:
            continue
        ret, name, params = m.groups()
        yield ret.strip(), name, split_params(params)


def split_params(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [] if out == ["void"] else out


def strip_name(a):
    """'void *ctx' -> 'void *', 'int n' -> 'int', 'void *' -> 'void *'"""
    m = re.match(r"^(.*?[\s*])(\w+)$", a)
    if m and m.group(1).strip() and m.group(1).strip() not in ("const", "unsigned", "struct"):
        return " ".join(m.group(1).replace("*", " * ").split()).replace("* *", "**")
    return " ".join(a.replace("*", " * ").split()).replace("* *", "**")


def parse_param(p):
    """(type without const, name, is_pointer)"""
    m = re.match(r"^(.*)\(\s*\*\s*(\w*)\s*\)\s*\((.*)\)$", p)
    if m:  # a spelled-out function pointer
        args = ", ".join(strip_name(a) for a in split_params(m.group(3)))
        return f"{m.group(1).strip()} (*)({args})", m.group(2), True
    m = re.match(r"^(.*?)(\w+)$", p)
    typ, name = (m.group(1), m.group(2)) if m and m.group(1).strip() else (p, "")
    if typ.strip() in ("", "const", "unsigned") or typ.strip().endswith("struct"):
        typ, name = p, ""
    typ = " ".join(typ.replace("const", " ").split()).replace("* *", "**")
    typ = re.sub(r"\s*\*", " *", typ).replace("* *", "**").strip()
    if re.search(r"\*\s*const\s*\*", p):  # pointer to const pointer
        base = typ.split("*")[0].strip()
        typ = f"{base} *const *"
    return typ, name, "*" in typ or typ in FUNCTION_POINTER_TYPEDEFS


def valid(func, typ, name, raw):
    if (func, name) in CONSUMED:
        return "tg_nn_identity()"
    if typ == "char *" and "const" in raw and PATHISH.search(name):
        return "FX_MISSING_PATH"
    if typ == "char *" and "const" in raw:
        return '"x"'
    if typ in VALID:
        return VALID[typ]
    if typ in SCALAR:
        return SCALAR_BY_NAME.get(name, SCALAR[typ])
    # a type without a fixture yet: NULL here too (the call still tests the
    # parameter made NULL); say so, so that someone adds one
    MISSING.add(typ)
    return "NULL" if "*" in typ or typ in FUNCTION_POINTER_TYPEDEFS else f"({typ})0"


def generate(include):
    out = ["/* Generated by scripts/gen_null_args.py from the headers in include/tg: do not edit.",
           " * One call per pointer parameter of every public function, that",
           " * parameter NULL, the others valid (tests/test_null_args.c). */", ""]
    table = []
    for ret, name, params in sorted(declarations(include), key=lambda d: d[1]):
        parsed = [parse_param(p) for p in params]
        for k, (typ, pname, is_ptr) in enumerate(parsed):
            if not is_ptr:
                continue
            args = ["NULL" if j == k else valid(name, t, n, params[j])
                    for j, (t, n, _) in enumerate(parsed)]
            fn = f"null_{name}_{k}"
            call = f"{name}({', '.join(args)})"
            r = " ".join(ret.replace("const", " ").split())
            r = re.sub(r"\s*\*", " *", r)
            body = []
            if r == "void":
                body.append(f"    {call};")
                body.append("    return TG_OK;")
            elif r == "tg_status":
                body.append(f"    return {call};")
            elif (r in FREE_RETURN or name in MALLOCED_STRING) and "const" not in ret:
                body.append(f"    {ret} r = {call};")
                body.append(f"    {'free' if name in MALLOCED_STRING else FREE_RETURN[r]}(r);")
                body.append("    return FX_RETURNED;")
            else:
                body.append(f"    {ret} r = {call};")
                body.append("    (void)r;")
                body.append("    return FX_RETURNED;")
            out.append(f"static tg_status {fn}(fixture *fx)\n{{\n    (void)fx;\n" +
                       "\n".join(body) + "\n}\n")
            label = f"{name}({', '.join('NULL' if j == k else (n or '_') for j, (_, n, _) in enumerate(parsed))})"
            table.append(f'    {{"{label}", {fn}, {"true" if r == "tg_status" else "false"}}},')
    out.append("static const null_call null_calls[] = {")
    out.extend(table)
    out.append("};")
    return "\n".join(out) + "\n"


def main(argv):
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    include = rest[0] if rest else os.path.join(HERE, "..", "include")
    path = rest[1] if len(rest) > 1 else os.path.join(HERE, "..", "tests", "null_args_calls.inc")
    text = generate(include)
    for typ in sorted(MISSING):
        print(f"gen_null_args.py: note: no fixture for '{typ}' (passed as NULL/0 where "
              f"it is not the NULL under test): add one to VALID", file=sys.stderr)
    if check:
        have = open(path).read() if os.path.exists(path) else ""
        if have != text:
            print(f"{path} is stale: run scripts/gen_null_args.py", file=sys.stderr)
            return 1
        print(f"{path} is up to date ({text.count('static tg_status null_')} calls)")
        return 0
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path} ({text.count('static tg_status null_')} calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
