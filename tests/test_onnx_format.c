/* The ONNX file-format layer: protobuf wire reading and writing, parsing
 * the committed fixtures (tests/data/onnx/, made by make_onnx_fixtures.py),
 * round trips, TensorProto <-> tg_tensor, and hostile input: malformed
 * wire data, deep nesting, every truncation and random bit flips of the
 * fixtures, and the saved fuzzer crashes in tests/data/onnx_crashes/.
 * With TG_ONNX_OUT_DIR=dir set, round-tripped and built models are written
 * there for `make_onnx_fixtures.py --check dir` (onnx.checker). */
#include "harness.h"

#include "onnx/proto.h"
#include "onnx/protobuf.h"

#include "../fuzz/onnx_exercise.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static char data_dir[1024]; /* tests/data */

static const char *const fixtures[] = {
    "gemm_relu", "conv", "all_attrs", "if_subgraph", "int64",
    "dtypes_raw", "dtypes_typed", "unsupported"};
#define N_FIXTURES (int)(sizeof fixtures / sizeof *fixtures)

/* ---- helpers ------------------------------------------------------------------ */

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static uint8_t *fixture_bytes(const char *name, size_t *len)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/onnx/%s.onnx", data_dir, name);
    uint8_t *b = read_file(path, len);
    if (!b)
        tt_fail(__FILE__, __LINE__, "cannot read %s", path);
    return b;
}

static onnx_model *load_fixture(const char *name)
{
    char path[1200];
    onnx_model *m = NULL;
    snprintf(path, sizeof path, "%s/onnx/%s.onnx", data_dir, name);
    CHECK_OK(onnx_model_load_file(path, &m));
    return m;
}

/* serialize, parse back, and check that serializing again gives the same
 * bytes; the re-parsed model (caller frees) */
static onnx_model *roundtrip(const onnx_model *m, const char *save_as)
{
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    onnx_model *m2 = NULL;
    CHECK_OK(onnx_model_serialize(m, &b1, &n1));
    CHECK_OK(onnx_model_parse(b1, n1, &m2));
    if (m2) {
        CHECK_OK(onnx_model_serialize(m2, &b2, &n2));
        CHECK(n1 == n2 && b2 && memcmp(b1, b2, n1) == 0);
    }
    const char *dir = getenv("TG_ONNX_OUT_DIR");
    if (dir && save_as && m2) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.onnx", dir, save_as);
        CHECK_OK(onnx_model_save_file(m2, path));
    }
    free(b1);
    free(b2);
    return m2;
}

static const onnx_tensor *find_init(const onnx_graph *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i].name && strcmp(g->initializer[i].name, name) == 0)
            return &g->initializer[i];
    tt_fail(__FILE__, __LINE__, "no initializer '%s'", name);
    return NULL;
}

static const onnx_attribute *find_attr(const onnx_node *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i].name && strcmp(n->attribute[i].name, name) == 0)
            return &n->attribute[i];
    tt_fail(__FILE__, __LINE__, "node '%s' has no attribute '%s'",
            n->name ? n->name : "", name);
    return NULL;
}

static bool str_is(const char *s, const char *want)
{
    return s && strcmp(s, want) == 0;
}

/* a tg tensor from tp, checked against float64 values */
static void check_converted(const onnx_tensor *tp, tg_dtype dt, int ndim,
                            const int64_t *shape, const double *want)
{
    tg_tensor *t = tp ? onnx_tensor_to_tg(tp) : NULL;
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(tg_dtype_of(t) == dt);
    CHECK(tg_ndim(t) == ndim);
    for (int i = 0; i < ndim && i < tg_ndim(t); i++)
        CHECK(tg_shape(t)[i] == shape[i]);
    if (tg_numel(t) > 0)
        CHECK_TENSOR(t, want, 0);
}

/* ---- protobuf wire level --------------------------------------------------------- */

static void test_pb_varints(void)
{
    uint8_t buf[64];
    const uint64_t vals[] = {0, 1, 127, 128, 300, (1ull << 32) - 1, 1ull << 35,
                             UINT64_MAX, (uint64_t)-5};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        tg_pb_writer w = {.buf = buf, .cap = sizeof buf};
        tg_pb_put_varint(&w, vals[i]);
        CHECK(w.err == NULL);
        CHECK(w.len == tg_pb_varint_size(vals[i]));
        const uint8_t *p = buf;
        uint64_t v = 0;
        CHECK(tg_pb_read_varint(&p, buf + w.len, &v));
        CHECK(v == vals[i] && p == buf + w.len);
        /* every shorter prefix is truncated */
        for (size_t k = 0; k < w.len; k++) {
            p = buf;
            CHECK(!tg_pb_read_varint(&p, buf + k, &v));
        }
    }
    CHECK(tg_pb_varint_size(UINT64_MAX) == 10);
    /* 11 bytes, and 10 bytes whose last carries more than bit 63 */
    const uint8_t eleven[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                              0xff, 0xff, 0xff, 0x81, 0x01};
    const uint8_t big10[] = {0xff, 0xff, 0xff, 0xff, 0xff,
                             0xff, 0xff, 0xff, 0xff, 0x02};
    const uint8_t *p = eleven;
    uint64_t v;
    CHECK(!tg_pb_read_varint(&p, eleven + sizeof eleven, &v));
    p = big10;
    CHECK(!tg_pb_read_varint(&p, big10 + sizeof big10, &v));
    CHECK(tg_pb_count_varints((const uint8_t *)"\x01\x80\x01\x05", 4) == 3);
    CHECK(tg_pb_count_varints((const uint8_t *)"\x01\x80", 2) == -1);
    /* the writer refuses to pass its capacity */
    tg_pb_writer w = {.buf = buf, .cap = 3};
    tg_pb_put_fixed32(&w, 7);
    CHECK(w.err != NULL && w.len == 0);
}

static void test_pb_fields(void)
{
    uint8_t buf[128];
    tg_pb_writer w = {.buf = buf, .cap = sizeof buf};
    tg_pb_put_tag(&w, 1, TG_PB_VARINT);
    tg_pb_put_varint(&w, 150);
    tg_pb_put_tag(&w, 2, TG_PB_I64);
    tg_pb_put_fixed64(&w, 0x0102030405060708ull);
    tg_pb_put_bytes(&w, 3, "abc", 3);
    tg_pb_put_tag(&w, 4, TG_PB_I32);
    tg_pb_put_fixed32(&w, 0xdeadbeef);
    /* group 5 holding a varint and a nested group 6 */
    tg_pb_put_tag(&w, 5, TG_PB_SGROUP);
    tg_pb_put_tag(&w, 9, TG_PB_VARINT);
    tg_pb_put_varint(&w, 1);
    tg_pb_put_tag(&w, 6, TG_PB_SGROUP);
    tg_pb_put_tag(&w, 6, TG_PB_EGROUP);
    tg_pb_put_tag(&w, 5, TG_PB_EGROUP);
    tg_pb_put_tag(&w, TG_PB_MAX_FIELD, TG_PB_VARINT);
    tg_pb_put_varint(&w, 0);
    CHECK(w.err == NULL);

    tg_pb_reader r;
    tg_pb_field f;
    tg_pb_reader_init(&r, buf, buf, w.len);
    CHECK(tg_pb_next(&r, &f) == 1 && f.number == 1 && f.u == 150);
    CHECK(tg_pb_next(&r, &f) == 1 && f.number == 2 && f.wire == TG_PB_I64 &&
          f.u == 0x0102030405060708ull);
    CHECK(tg_pb_next(&r, &f) == 1 && f.number == 3 && f.len == 3 &&
          memcmp(f.data, "abc", 3) == 0);
    CHECK(tg_pb_next(&r, &f) == 1 && f.number == 4 && f.u == 0xdeadbeef);
    CHECK(tg_pb_next(&r, &f) == 1 && f.number == 5 && f.wire == TG_PB_SGROUP &&
          f.len == 4 && f.stop - f.start == 6);
    CHECK(tg_pb_next(&r, &f) == 1 && f.number == TG_PB_MAX_FIELD);
    CHECK(tg_pb_next(&r, &f) == 0);

    /* malformed: each fails with a message, never reads past the end */
    static const struct {
        const char *bytes;
        size_t len;
        const char *needle;
    } bad[] = {
        {"\x00", 1, "field number 0"},
        {"\x0e\x00", 2, "invalid wire type 6"},
        {"\x0f", 1, "invalid wire type 7"},
        {"\x0c", 1, "end-group tag 1 without"},
        {"\x0b\x08\x01", 3, "not closed"},
        {"\x0b\x14", 2, "does not match"},
        {"\x0a\x05\x01\x02", 4, "exceeds the 2 bytes left"},
        {"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10, "exceeds"},
        {"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12, "length varint"},
        {"\x09\x01\x02\x03", 4, "8-byte value truncated"},
        {"\x0d\x01", 2, "4-byte value truncated"},
        {"\x08\x80", 2, "truncated varint"},
        {"\x80\x80\x80\x80\x10", 5, "out of range"},
        {"\x80", 1, "field tag"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const uint8_t *b = (const uint8_t *)bad[i].bytes;
        tg_pb_reader_init(&r, b, b, bad[i].len);
        int st;
        while ((st = tg_pb_next(&r, &f)) == 1) {
        }
        CHECK(st == -1);
        if (!strstr(r.err, bad[i].needle))
            tt_fail(__FILE__, __LINE__, "case %zu: \"%s\" lacks \"%s\"", i,
                    r.err, bad[i].needle);
    }
    /* groups nested deeper than the limit */
    uint8_t deep[2 * (TG_PB_MAX_GROUP_DEPTH + 1)];
    for (int i = 0; i <= TG_PB_MAX_GROUP_DEPTH; i++)
        deep[i] = 0x0b; /* start group 1 */
    for (int i = 0; i <= TG_PB_MAX_GROUP_DEPTH; i++)
        deep[TG_PB_MAX_GROUP_DEPTH + 1 + i] = 0x0c;
    tg_pb_reader_init(&r, deep, deep, sizeof deep);
    CHECK(tg_pb_next(&r, &f) == -1 && strstr(r.err, "nested deeper"));
    tg_pb_reader_init(&r, deep + 1, deep + 1, sizeof deep - 2);
    CHECK(tg_pb_next(&r, &f) == 1 && tg_pb_next(&r, &f) == 0);
}

/* ---- the fixtures ---------------------------------------------------------------- */

static void check_gemm_relu(const onnx_model *m)
{
    CHECK(m->ir_version == 8 && m->has_ir_version);
    CHECK(m->n_opset_import == 1 && m->opset_import[0].version == 13);
    CHECK(str_is(m->producer_name, "tensorgraph-fixtures"));
    CHECK(str_is(m->producer_version, "1"));
    CHECK(m->unknown.len > 0); /* doc_string and metadata_props */
    const onnx_graph *g = m->graph;
    CHECK(g && str_is(g->name, "gemm_relu"));
    if (!g)
        return;
    CHECK(g->n_node == 2 && g->n_initializer == 2 && g->n_input == 1 &&
          g->n_output == 1 && g->n_value_info == 1);
    if (g->n_node != 2 || g->n_input != 1)
        return;
    const onnx_node *gemm = &g->node[0];
    CHECK(str_is(gemm->op_type, "Gemm") && str_is(gemm->name, "gemm"));
    CHECK(gemm->n_input == 3 && str_is(gemm->input[1], "W") &&
          gemm->n_output == 1 && str_is(gemm->output[0], "H"));
    const onnx_attribute *a = find_attr(gemm, "alpha");
    CHECK(a && a->type == ONNX_ATTR_FLOAT && a->f == 1.0f);
    a = find_attr(gemm, "transB");
    CHECK(a && a->type == ONNX_ATTR_INT && a->i == 1);
    CHECK(str_is(g->node[1].op_type, "Relu"));
    const onnx_value_info *x = &g->input[0];
    CHECK(str_is(x->name, "X") && x->has_type && x->type.has_tensor_type);
    CHECK(x->type.elem_type == ONNX_FLOAT && x->type.has_shape &&
          x->type.n_dims == 2);
    if (x->type.n_dims == 2) {
        CHECK(x->type.dims[0].kind == ONNX_DIM_PARAM &&
              str_is(x->type.dims[0].param, "N"));
        CHECK(x->type.dims[1].kind == ONNX_DIM_VALUE &&
              x->type.dims[1].value == 4);
    }
    double w[12];
    for (int i = 0; i < 12; i++)
        w[i] = (float)(i / 10.0f);
    check_converted(find_init(g, "W"), TG_FLOAT32, 2, (int64_t[]){3, 4}, w);
    check_converted(find_init(g, "B"), TG_FLOAT32, 1, (int64_t[]){3},
                    (double[]){0.5, -1, 2});
}

static void check_conv(const onnx_model *m)
{
    const onnx_graph *g = m->graph;
    CHECK(g && g->n_node == 1);
    if (!g || g->n_node != 1)
        return;
    CHECK(m->opset_import[0].version == 11);
    const onnx_node *n = &g->node[0];
    CHECK(str_is(n->op_type, "Conv"));
    const onnx_attribute *a = find_attr(n, "pads");
    CHECK(a && a->type == ONNX_ATTR_INTS && a->n_ints == 4 && a->ints[3] == 1);
    a = find_attr(n, "kernel_shape");
    CHECK(a && a->n_ints == 2 && a->ints[0] == 3 && a->ints[1] == 3);
    a = find_attr(n, "group");
    CHECK(a && a->i == 1);
    double w[18];
    for (int i = 0; i < 18; i++)
        w[i] = (float)((float)i * 0.1f - 0.9f);
    const onnx_tensor *tw = find_init(g, "W");
    tg_tensor *t = tw ? onnx_tensor_to_tg(tw) : NULL;
    CHECK(t != NULL);
    if (t) {
        CHECK_SHAPE(t, 2, 1, 3, 3);
        CHECK_TENSOR(t, w, 1e-6);
    }
    const onnx_value_info *y = &g->output[0];
    CHECK(y->type.n_dims == 4 && y->type.dims[1].value == 2);
}

static void check_all_attrs(const onnx_model *m)
{
    const onnx_graph *g = m->graph;
    CHECK(g && g->n_node == 1);
    if (!g || g->n_node != 1)
        return;
    CHECK(m->n_opset_import == 2 && str_is(m->opset_import[1].domain, "test.domain"));
    const onnx_node *n = &g->node[0];
    CHECK(str_is(n->domain, "test.domain") && str_is(n->op_type, "Custom"));
    CHECK(n->n_output == 2 && str_is(n->output[1], "")); /* omitted output */
    CHECK(n->unknown.len > 0);                           /* doc_string */
    CHECK(n->n_attribute == 11);
    const onnx_attribute *a;
    if ((a = find_attr(n, "f")))
        CHECK(a->type == ONNX_ATTR_FLOAT && a->f == 0.5f);
    if ((a = find_attr(n, "i")))
        CHECK(a->type == ONNX_ATTR_INT && a->i == -7);
    if ((a = find_attr(n, "zero")))
        CHECK(a->type == ONNX_ATTR_INT && a->i == 0 && a->has_i);
    if ((a = find_attr(n, "s")))
        CHECK(a->type == ONNX_ATTR_STRING && a->s.len == 5 &&
              memcmp(a->s.data, "hello", 5) == 0);
    if ((a = find_attr(n, "t"))) {
        CHECK(a->type == ONNX_ATTR_TENSOR && a->t);
        check_converted(a->t, TG_INT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    }
    if ((a = find_attr(n, "g"))) {
        CHECK(a->type == ONNX_ATTR_GRAPH && a->g && str_is(a->g->name, "g_attr"));
        CHECK(a->g && a->g->n_node == 1 && str_is(a->g->node[0].op_type, "Constant"));
    }
    if ((a = find_attr(n, "floats")))
        CHECK(a->type == ONNX_ATTR_FLOATS && a->n_floats == 2 &&
              a->floats[0] == 1.0f && a->floats[1] == -2.5f);
    if ((a = find_attr(n, "ints")))
        CHECK(a->type == ONNX_ATTR_INTS && a->n_ints == 3 && a->ints[1] == -2 &&
              a->ints[2] == 3000000000LL);
    if ((a = find_attr(n, "strings"))) {
        CHECK(a->type == ONNX_ATTR_STRINGS && a->n_strings == 3);
        if (a->n_strings == 3)
            CHECK(a->strings[1].len == 2 && strcmp((char *)a->strings[1].data, "bc") == 0 &&
                  a->strings[2].len == 0 && a->strings[2].data);
    }
    if ((a = find_attr(n, "tensors"))) {
        CHECK(a->type == ONNX_ATTR_TENSORS && a->n_tensors == 2);
        if (a->n_tensors == 2) {
            check_converted(&a->tensors[0], TG_FLOAT32, 1, (int64_t[]){1},
                            (double[]){1.5});
            check_converted(&a->tensors[1], TG_BOOL, 1, (int64_t[]){2},
                            (double[]){1, 0});
        }
    }
    if ((a = find_attr(n, "graphs"))) {
        CHECK(a->type == ONNX_ATTR_GRAPHS && a->n_graphs == 2);
        if (a->n_graphs == 2)
            CHECK(str_is(a->graphs[1].name, "g1"));
    }
    /* a value_info without a shape: any rank */
    CHECK(g->n_value_info == 1 && g->value_info[0].type.has_tensor_type &&
          !g->value_info[0].type.has_shape);
}

static void check_if_subgraph(const onnx_model *m)
{
    const onnx_graph *g = m->graph;
    CHECK(g && g->n_node == 1 && g->n_input == 2);
    if (!g || g->n_node != 1)
        return;
    CHECK(g->input[0].type.elem_type == ONNX_BOOL && g->input[0].type.has_shape &&
          g->input[0].type.n_dims == 0); /* a scalar */
    const onnx_node *outer = &g->node[0];
    CHECK(str_is(outer->op_type, "If"));
    const onnx_attribute *then_b = find_attr(outer, "then_branch");
    const onnx_attribute *else_b = find_attr(outer, "else_branch");
    CHECK(then_b && then_b->type == ONNX_ATTR_GRAPH && then_b->g);
    CHECK(else_b && else_b->g && else_b->g->n_node == 1);
    if (!else_b || !else_b->g || else_b->g->n_node != 1)
        return;
    const onnx_node *inner = &else_b->g->node[0];
    CHECK(str_is(inner->op_type, "If") && str_is(inner->name, "inner_if"));
    const onnx_attribute *ie = find_attr(inner, "else_branch");
    CHECK(ie && ie->g && ie->g->n_node == 1);
    if (!ie || !ie->g || ie->g->n_node != 1)
        return;
    const onnx_attribute *v = find_attr(&ie->g->node[0], "value");
    if (v)
        check_converted(v->t, TG_FLOAT32, 1, (int64_t[]){1}, (double[]){20});
}

static void check_int64(const onnx_model *m)
{
    const onnx_graph *g = m->graph;
    CHECK(g && g->n_node == 3);
    if (!g || g->n_node != 3)
        return;
    check_converted(find_init(g, "shape"), TG_INT64, 1, (int64_t[]){2},
                    (double[]){3, 2});
    const onnx_attribute *v = find_attr(&g->node[1], "value");
    if (v)
        check_converted(v->t, TG_INT64, 2, (int64_t[]){1, 2}, (double[]){1, 2});
    CHECK(g->input[0].type.elem_type == ONNX_INT64);
}

/* the values make_onnx_fixtures.py stores in dtypes_raw / dtypes_typed,
 * compared bit for bit in each tensor's own type */
static void check_dtypes(const onnx_model *m, bool raw)
{
    const onnx_graph *g = m->graph;
    CHECK(g && g->n_initializer == 8);
    if (!g || g->n_initializer != 8)
        return;
    for (size_t i = 0; i < g->n_initializer; i++)
        CHECK((g->initializer[i].raw_data.data != NULL) == raw);
    const float f32[] = {1.5f, -2.25f, 3.0f, 0.0f, 1e-3f, -7.0f};
    const double f64[] = {1.0 / 3.0, -2.5, 1e300};
    const int32_t i32[] = {INT32_MIN, INT32_MAX, 0, -5};
    const int64_t i64[] = {INT64_MIN, INT64_MAX, 12345678901234LL};
    const uint8_t u8[] = {0, 1, 128, 255};
    const uint8_t b[] = {1, 0, 1, 1, 0};
    static const struct {
        const char *name;
        tg_dtype dt;
        int ndim;
        int64_t shape[2];
    } want[] = {
        {"f32", TG_FLOAT32, 2, {2, 3}}, {"f64", TG_FLOAT64, 1, {3}},
        {"i32", TG_INT32, 2, {2, 2}},   {"i64", TG_INT64, 1, {3}},
        {"u8", TG_UINT8, 1, {4}},       {"bool", TG_BOOL, 1, {5}},
    };
    const void *vals[] = {f32, f64, i32, i64, u8, b};
    for (int k = 0; k < 6; k++) {
        const onnx_tensor *tp = find_init(g, want[k].name);
        tg_tensor *t = tp ? onnx_tensor_to_tg(tp) : NULL;
        CHECK(t != NULL);
        if (!t)
            continue;
        CHECK(tg_dtype_of(t) == want[k].dt && tg_ndim(t) == want[k].ndim);
        CHECK(tg_shape(t)[0] == want[k].shape[0]);
        size_t bytes = (size_t)tg_numel(t) * tg_dtype_size(want[k].dt);
        if (memcmp(tg_data(t), vals[k], bytes) != 0)
            tt_fail(__FILE__, __LINE__, "%s (%s): values differ", want[k].name,
                    raw ? "raw" : "typed");
    }
    tg_tensor *s = onnx_tensor_to_tg(find_init(g, "scalar"));
    CHECK(s && tg_ndim(s) == 0 && tg_item(s) == 42.5);
    tg_tensor *e = onnx_tensor_to_tg(find_init(g, "empty"));
    CHECK(e && tg_ndim(e) == 2 && tg_numel(e) == 0);
    if (e)
        CHECK_SHAPE(e, 0, 3);
}

static void check_unsupported(const onnx_model *m)
{
    const onnx_graph *g = m->graph;
    CHECK(g && g->n_initializer == 2);
    if (!g || g->n_initializer != 2)
        return;
    CHECK_ERROR(onnx_tensor_to_tg(find_init(g, "half")), TG_ERR_UNSUPPORTED,
                "FLOAT16");
    CHECK_ERROR(onnx_tensor_to_tg(find_init(g, "words")), TG_ERR_UNSUPPORTED,
                "'words' has data type STRING (8)");
    /* string_data is outside the subset: kept as unknown bytes */
    CHECK(find_init(g, "words")->unknown.len > 0);
    CHECK(g->output[0].type.elem_type == ONNX_FLOAT16);
}

static void check_fixture(const char *name, const onnx_model *m)
{
    if (strcmp(name, "gemm_relu") == 0) check_gemm_relu(m);
    else if (strcmp(name, "conv") == 0) check_conv(m);
    else if (strcmp(name, "all_attrs") == 0) check_all_attrs(m);
    else if (strcmp(name, "if_subgraph") == 0) check_if_subgraph(m);
    else if (strcmp(name, "int64") == 0) check_int64(m);
    else if (strcmp(name, "dtypes_raw") == 0) check_dtypes(m, true);
    else if (strcmp(name, "dtypes_typed") == 0) check_dtypes(m, false);
    else if (strcmp(name, "unsupported") == 0) check_unsupported(m);
}

/* each fixture: parsed, checked, round-tripped and checked again */
static void test_fixtures(void)
{
    for (int i = 0; i < N_FIXTURES; i++) {
        onnx_model *m = load_fixture(fixtures[i]);
        if (!m)
            continue;
        check_fixture(fixtures[i], m);
        char rt[64];
        snprintf(rt, sizeof rt, "rt_%s", fixtures[i]);
        onnx_model *m2 = roundtrip(m, rt);
        if (m2)
            check_fixture(fixtures[i], m2);
        onnx_model_free(m);
        onnx_model_free(m2);
    }
}

/* the raw and typed fixtures hold the same values */
static void test_raw_equals_typed(void)
{
    onnx_model *a = load_fixture("dtypes_raw"), *b = load_fixture("dtypes_typed");
    if (a && b && a->graph && b->graph) {
        CHECK(a->graph->n_initializer == b->graph->n_initializer);
        for (size_t i = 0; i < a->graph->n_initializer &&
                           i < b->graph->n_initializer; i++) {
            tg_tensor *x = onnx_tensor_to_tg(&a->graph->initializer[i]);
            tg_tensor *y = onnx_tensor_to_tg(&b->graph->initializer[i]);
            CHECK(x && y && tg_dtype_of(x) == tg_dtype_of(y) &&
                  tg_numel(x) == tg_numel(y));
            if (x && y && tg_numel(x) == tg_numel(y))
                CHECK(memcmp(tg_data(x), tg_data(y),
                             (size_t)tg_numel(x) * tg_dtype_size(tg_dtype_of(x))) == 0);
        }
    }
    onnx_model_free(a);
    onnx_model_free(b);
}

/* ---- tensors by hand --------------------------------------------------------------- */

static void test_tensor_errors(void)
{
    float vals[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[9] = {2, 3};
    onnx_tensor t = {.name = "w", .dims = dims, .n_dims = 2,
                     .data_type = ONNX_FLOAT};
    t.raw_data = (onnx_bytes){(uint8_t *)vals, 20};
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO,
                "'w': raw_data has 20 bytes, expected 24 (6 FLOAT elements of "
                "4 bytes, dims [2, 3])");
    t.raw_data.len = 28;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO, "raw_data has 28 bytes");
    t.raw_data.len = 24;
    tg_tensor *ok = onnx_tensor_to_tg(&t);
    CHECK(ok != NULL);
    if (ok)
        CHECK_TENSOR(ok, ((double[]){1, 2, 3, 4, 5, 6}), 0);

    t.float_data = vals;
    t.n_float_data = 6;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO, "both raw_data and float_data");
    t.raw_data = (onnx_bytes){0};
    CHECK(onnx_tensor_to_tg(&t) != NULL);
    t.n_float_data = 5;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO,
                "float_data has 5 values, expected 6 (dims [2, 3])");
    t.n_float_data = 0;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO, "raw_data is absent too");
    int64_t i64[6] = {0};
    t.int64_data = i64;
    t.n_int64_data = 6;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO,
                "FLOAT values are in int64_data; expected float_data");
    t.int64_data = NULL;
    t.n_int64_data = 0;

    /* dims */
    t.float_data = vals;
    t.n_float_data = 6;
    dims[0] = -2;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO, "dims[0] = -2 is negative");
    dims[0] = (int64_t)1 << 40;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO, "over 2^31");
    int64_t big[3] = {1 << 20, 1 << 20, 1 << 20};
    t.dims = big;
    t.n_dims = 3;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO, "more than 2^31 elements");
    int64_t most[2] = {(int64_t)1 << 30, 2}; /* exactly 2^31: allowed, but no data */
    t.dims = most;
    t.n_dims = 2;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO, "expected 2147483648");
    int64_t empty[2] = {(int64_t)1 << 31, 0};
    t.dims = empty;
    t.n_float_data = 0;
    tg_tensor *e = onnx_tensor_to_tg(&t);
    CHECK(e && tg_numel(e) == 0);
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    t.dims = nine;
    t.n_dims = 9;
    t.n_float_data = 1;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_UNSUPPORTED, "has 9 dims");

    /* types and locations */
    t.dims = dims;
    dims[0] = 2;
    t.n_dims = 2;
    t.n_float_data = 6;
    t.data_type = ONNX_UNDEFINED;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_IO, "no data_type");
    t.data_type = ONNX_BFLOAT16;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_UNSUPPORTED, "BFLOAT16 (16)");
    t.data_type = 99;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_UNSUPPORTED, "? (99)");
    t.data_type = ONNX_FLOAT;
    t.data_location = ONNX_DATA_EXTERNAL;
    CHECK_ERROR(onnx_tensor_to_tg(&t), TG_ERR_UNSUPPORTED, "external");
    CHECK_ERROR(onnx_tensor_to_tg(NULL), TG_ERR_ARG, "NULL");

    /* UINT8 and BOOL from int32_data */
    int32_t i32[3] = {0, 255, 256};
    int64_t d3[1] = {3};
    onnx_tensor u = {.name = "u", .dims = d3, .n_dims = 1,
                     .data_type = ONNX_UINT8, .int32_data = i32, .n_int32_data = 3};
    CHECK_ERROR(onnx_tensor_to_tg(&u), TG_ERR_IO,
                "int32_data[2] = 256 is out of range for UINT8");
    i32[2] = 7;
    tg_tensor *ut = onnx_tensor_to_tg(&u);
    CHECK(ut && tg_dtype_of(ut) == TG_UINT8);
    if (ut)
        CHECK_TENSOR(ut, ((double[]){0, 255, 7}), 0);
    u.data_type = ONNX_BOOL;
    tg_tensor *bt = onnx_tensor_to_tg(&u);
    CHECK(bt && tg_dtype_of(bt) == TG_BOOL);
    if (bt)
        CHECK(memcmp(tg_data(bt), "\0\1\1", 3) == 0);
    /* raw BOOL bytes other than 0/1 are true */
    u.int32_data = NULL;
    u.n_int32_data = 0;
    u.raw_data = (onnx_bytes){(uint8_t *)"\0\2\377", 3};
    bt = onnx_tensor_to_tg(&u);
    CHECK(bt && memcmp(tg_data(bt), "\0\1\1", 3) == 0);

    tg_dtype dt;
    CHECK_FAILS(onnx_dtype_to_tg(ONNX_COMPLEX64, &dt), TG_ERR_UNSUPPORTED,
                "COMPLEX64");
    CHECK_OK(onnx_dtype_to_tg(ONNX_DOUBLE, &dt));
    CHECK(dt == TG_FLOAT64 && onnx_dtype_from_tg(TG_BOOL) == ONNX_BOOL);
    CHECK(str_is(onnx_attribute_type_name(ONNX_ATTR_GRAPHS), "GRAPHS"));
    CHECK(str_is(onnx_attribute_type_name(-1), "?"));
}

/* tg -> TensorProto -> tg for every dtype, raw and typed, contiguous and
 * not (a transposed view) */
static void test_tensor_from_tg(void)
{
    for (int dt = 0; dt < TG_NUM_DTYPES; dt++) {
        tg_tensor *x = tg_arange((tg_dtype)dt, 0, 6, 1);
        if (dt == TG_BOOL)
            x = tg_ne(tg_arange(TG_INT32, 0, 6, 1), tg_full(TG_INT32, 0, NULL, 2));
        tg_tensor *y = tg_reshape(x, 2, (int64_t[]){2, 3});
        tg_tensor *views[2] = {y, tg_transpose(y, 0, 1)};
        for (int v = 0; v < 2; v++)
            for (int raw = 0; raw < 2; raw++) {
                onnx_tensor tp;
                CHECK_OK(onnx_tensor_from_tg(views[v], "x", raw, &tp));
                CHECK(str_is(tp.name, "x") && tp.n_dims == 2 &&
                      tp.data_type == onnx_dtype_from_tg((tg_dtype)dt));
                CHECK((tp.raw_data.data != NULL) == (raw != 0));
                tg_tensor *back = onnx_tensor_to_tg(&tp);
                CHECK(back && tg_dtype_of(back) == (tg_dtype)dt);
                if (back) {
                    CHECK(tg_shape(back)[0] == tg_shape(views[v])[0]);
                    double want[6];
                    CHECK_OK(tg_copy_to(views[v], TG_FLOAT64, want));
                    CHECK_TENSOR(back, want, 0);
                }
                onnx_tensor_clear(&tp);
            }
    }
    /* int64 extremes survive exactly, also from a non-contiguous view */
    const int64_t ext[4] = {INT64_MIN, INT64_MAX, -1, (int64_t)1 << 60};
    tg_tensor *a = tg_from_data(TG_INT64, 2, (int64_t[]){2, 2}, ext);
    tg_tensor *at = tg_transpose(a, 0, 1);
    for (int raw = 0; raw < 2; raw++) {
        onnx_tensor tp;
        CHECK_OK(onnx_tensor_from_tg(at, NULL, raw, &tp));
        CHECK(tp.name == NULL);
        tg_tensor *back = onnx_tensor_to_tg(&tp);
        const int64_t want[4] = {INT64_MIN, -1, INT64_MAX, (int64_t)1 << 60};
        CHECK(back && memcmp(tg_data(back), want, sizeof want) == 0);
        onnx_tensor_clear(&tp);
    }
    /* a 0-d tensor and an empty one */
    onnx_tensor tp;
    CHECK_OK(onnx_tensor_from_tg(tg_scalar(TG_FLOAT64, -0.5), "s", true, &tp));
    CHECK(tp.n_dims == 0 && tp.raw_data.len == 8);
    tg_tensor *s = onnx_tensor_to_tg(&tp);
    CHECK(s && tg_ndim(s) == 0 && tg_item(s) == -0.5);
    onnx_tensor_clear(&tp);
    CHECK_OK(onnx_tensor_from_tg(tg_zeros(TG_INT32, 2, (int64_t[]){0, 4}), "e",
                                 true, &tp));
    CHECK(tp.raw_data.data && tp.raw_data.len == 0);
    tg_tensor *e = onnx_tensor_to_tg(&tp);
    CHECK(e && tg_numel(e) == 0);
    onnx_tensor_clear(&tp);
    CHECK_FAILS(onnx_tensor_from_tg(NULL, "x", true, &tp), TG_ERR_ARG, "NULL");
}

/* ---- a model built by hand (the exporter's path) ------------------------------------ */

static char *dup(const char *s)
{
    return strdup(s);
}

static char **strs1(const char *s)
{
    char **a = malloc(sizeof *a);
    a[0] = dup(s);
    return a;
}

static void set_vi(onnx_value_info *v, const char *name, int32_t elem,
                   int ndim, const int64_t *dims)
{
    memset(v, 0, sizeof *v);
    v->name = dup(name);
    v->has_type = true;
    v->type.has_tensor_type = true;
    v->type.elem_type = elem;
    v->type.has_shape = true;
    v->type.n_dims = (size_t)ndim;
    v->type.dims = calloc((size_t)ndim + 1, sizeof *v->type.dims);
    for (int i = 0; i < ndim; i++) {
        v->type.dims[i].kind = ONNX_DIM_VALUE;
        v->type.dims[i].value = dims[i];
    }
}

/* one Identity per dtype, raw and typed initializers */
static onnx_model *build_model(void)
{
    onnx_model *m = calloc(1, sizeof *m);
    m->ir_version = 8;
    m->producer_name = dup("tensorgraph");
    m->n_opset_import = 1;
    m->opset_import = calloc(1, sizeof *m->opset_import);
    m->opset_import[0].domain = dup("");
    m->opset_import[0].version = 17;
    onnx_graph *g = m->graph = calloc(1, sizeof *g);
    g->name = dup("built");
    int n = 2 * TG_NUM_DTYPES;
    g->initializer = calloc((size_t)n, sizeof *g->initializer);
    g->node = calloc((size_t)n, sizeof *g->node);
    g->output = calloc((size_t)n, sizeof *g->output);
    for (int i = 0; i < n; i++) {
        tg_dtype dt = (tg_dtype)(i % TG_NUM_DTYPES);
        tg_tensor *x = tg_arange(dt == TG_BOOL ? TG_UINT8 : dt, 0, 4, 1);
        if (dt == TG_BOOL)
            x = tg_ne(x, tg_full(TG_UINT8, 0, NULL, 0));
        x = tg_reshape(x, 2, (int64_t[]){2, 2});
        char name[32], out[40];
        snprintf(name, sizeof name, "c%d_%s", i, tg_dtype_name(dt));
        snprintf(out, sizeof out, "%s_out", name);
        CHECK_OK(onnx_tensor_from_tg(x, name, i < TG_NUM_DTYPES, &g->initializer[i]));
        g->n_initializer++;
        onnx_node *nd = &g->node[g->n_node++];
        nd->op_type = dup("Identity");
        nd->input = strs1(name);
        nd->n_input = 1;
        nd->output = strs1(out);
        nd->n_output = 1;
        set_vi(&g->output[g->n_output++], out, onnx_dtype_from_tg(dt), 2,
               (int64_t[]){2, 2});
    }
    return m;
}

static void test_built_model(void)
{
    onnx_model *m = build_model();
    onnx_model *m2 = roundtrip(m, "built");
    CHECK(m2 && m2->graph && m2->graph->n_initializer == 2 * TG_NUM_DTYPES);
    if (m2 && m2->graph)
        for (size_t i = 0; i < m2->graph->n_initializer; i++) {
            tg_tensor *t = onnx_tensor_to_tg(&m2->graph->initializer[i]);
            static const double ints[4] = {0, 1, 2, 3}, bools[4] = {0, 1, 1, 1};
            CHECK(t && tg_numel(t) == 4);
            if (t)
                CHECK_TENSOR(t, tg_dtype_of(t) == TG_BOOL ? bools : ints, 0);
        }
    /* an explicit zero survives (has_ flags) and absent stays absent */
    onnx_node *nd = &m->graph->node[0];
    nd->attribute = calloc(2, sizeof *nd->attribute);
    nd->n_attribute = 2;
    nd->attribute[0] = (onnx_attribute){.name = dup("zero"), .type = ONNX_ATTR_INT,
                                        .has_i = true};
    nd->attribute[1] = (onnx_attribute){.name = dup("unset"), .type = ONNX_ATTR_INT};
    onnx_model *m3 = roundtrip(m, NULL);
    if (m3 && m3->graph && m3->graph->node[0].n_attribute == 2) {
        CHECK(m3->graph->node[0].attribute[0].has_i);
        CHECK(!m3->graph->node[0].attribute[1].has_i);
    }
    /* saving where it cannot go fails cleanly */
    CHECK_FAILS(onnx_model_save_file(m, "/nonexistent-dir/x.onnx"), TG_ERR_IO,
                "cannot write");
    CHECK_FAILS(onnx_model_serialize(NULL, NULL, NULL), TG_ERR_ARG, "NULL");
    onnx_model_free(m);
    onnx_model_free(m2);
    onnx_model_free(m3);
}

/* ---- hostile wire data at the model level ------------------------------------------ */

/* a writer into cap bytes at space */
static tg_pb_writer wr(uint8_t *space, size_t cap)
{
    return (tg_pb_writer){.buf = space, .cap = cap};
}

static void expect_parse_error(const uint8_t *b, size_t n, const char *needle,
                               int line)
{
    onnx_model *m = (onnx_model *)1;
    tg_clear_error();
    tg_status s = onnx_model_parse(b, n, &m);
    tt_checks++;
    if (s != TG_ERR_IO || m != NULL)
        tt_fail(__FILE__, line, "parse gave %s, expected TG_ERR_IO",
                tg_status_name(s));
    else if (!strstr(tg_last_error(), needle))
        tt_fail(__FILE__, line, "message \"%s\" lacks \"%s\"", tg_last_error(),
                needle);
    tg_clear_error();
}
#define PARSE_ERROR(b, n, needle) expect_parse_error(b, n, needle, __LINE__)

static void test_hostile_fields(void)
{
    uint8_t s[256], inner[128], mid[128];
    tg_pb_writer w;

    /* wire types that do not match the field */
    PARSE_ERROR((const uint8_t *)"\x0a\x00", 2,
                "model.ir_version: wire type 2 (length-delimited), expected varint");
    PARSE_ERROR((const uint8_t *)"\x38\x01", 2, "model.graph: wire type 0");
    PARSE_ERROR((const uint8_t *)"\x12\x02\x61\x00", 4,
                "model.producer_name: string contains a NUL byte");
    /* an 11-byte varint and an oversized length */
    PARSE_ERROR((const uint8_t *)"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
                12, "longer than 10 bytes");
    PARSE_ERROR((const uint8_t *)"\x3a\x05\x0a\x01", 4,
                "field 7: length 5 exceeds the 2 bytes left (at byte 0)");

    /* errors deep inside name their path: graph.node[1].attribute[0].t */
    w = wr(inner, sizeof inner);
    tg_pb_put_tag(&w, 2, TG_PB_VARINT); /* data_type */
    tg_pb_put_varint(&w, 1);
    tg_pb_put_bytes(&w, 1, "\x80", 1); /* packed dims, truncated */
    size_t ni = w.len;
    w = wr(mid, sizeof mid);
    tg_pb_put_bytes(&w, 1, "a", 1);
    tg_pb_put_bytes(&w, 5, inner, ni); /* AttributeProto.t */
    size_t nm = w.len;
    w = wr(inner, sizeof inner);
    tg_pb_put_bytes(&w, 5, mid, nm); /* NodeProto.attribute */
    ni = w.len;
    w = wr(mid, sizeof mid);
    tg_pb_put_bytes(&w, 1, "", 0);     /* GraphProto.node[0] */
    tg_pb_put_bytes(&w, 1, inner, ni); /* GraphProto.node[1] */
    nm = w.len;
    w = wr(s, sizeof s);
    tg_pb_put_bytes(&w, 7, mid, nm);
    PARSE_ERROR(s, w.len, "model.graph.node[1].attribute[0].t.dims: packed "
                          "varints end in a truncated varint");

    /* float_data packed length not a multiple of 4; int32_data as 64-bit */
    w = wr(mid, sizeof mid);
    tg_pb_put_bytes(&w, 4, "\0\0\0\0\0", 5);
    nm = w.len;
    w = wr(s, sizeof s);
    tg_pb_put_bytes(&w, 5, mid, nm); /* as GraphProto.initializer */
    w = wr(inner, sizeof inner);
    tg_pb_put_bytes(&w, 7, s, nm + 2);
    PARSE_ERROR(inner, w.len, "model.graph.initializer[0].float_data: packed "
                              "length 5 is not a multiple of 4");
    w = wr(mid, sizeof mid);
    tg_pb_put_tag(&w, 5, TG_PB_I64);
    tg_pb_put_fixed64(&w, 1);
    nm = w.len;
    w = wr(s, sizeof s);
    tg_pb_put_bytes(&w, 5, mid, nm);
    size_t ns = w.len;
    w = wr(inner, sizeof inner);
    tg_pb_put_bytes(&w, 7, s, ns);
    PARSE_ERROR(inner, w.len, "int32_data: wire type 1 (64-bit), expected "
                              "length-delimited");

    /* unknown fields of every wire type, groups included, are kept and
     * written back; known fields around them still parse */
    w = wr(s, sizeof s);
    tg_pb_put_tag(&w, 1, TG_PB_VARINT);
    tg_pb_put_varint(&w, 7);
    tg_pb_put_tag(&w, 100, TG_PB_VARINT);
    tg_pb_put_varint(&w, 300);
    tg_pb_put_tag(&w, 101, TG_PB_I64);
    tg_pb_put_fixed64(&w, 42);
    tg_pb_put_bytes(&w, 102, "xyz", 3);
    tg_pb_put_tag(&w, 103, TG_PB_I32);
    tg_pb_put_fixed32(&w, 5);
    tg_pb_put_tag(&w, 104, TG_PB_SGROUP);
    tg_pb_put_tag(&w, 1, TG_PB_VARINT);
    tg_pb_put_varint(&w, 1);
    tg_pb_put_tag(&w, 104, TG_PB_EGROUP);
    tg_pb_put_bytes(&w, 2, "p", 1);
    onnx_model *m = NULL;
    CHECK_OK(onnx_model_parse(s, w.len, &m));
    if (m) {
        CHECK(m->ir_version == 7 && str_is(m->producer_name, "p"));
        CHECK(m->unknown.len == w.len - 2 - 3);
        uint8_t *out;
        size_t n;
        CHECK_OK(onnx_model_serialize(m, &out, &n));
        /* known fields first, then the unknown ones in their order */
        CHECK(n == w.len && memcmp(out, s, 2) == 0 &&
              memcmp(out + 2, s + n - 3, 3) == 0 &&
              memcmp(out + 5, s + 2, n - 5) == 0);
        free(out);
        onnx_model_free(m);
    }
    /* groups: unmatched, unclosed */
    PARSE_ERROR((const uint8_t *)"\xa4\x06", 2, "end-group tag 100 without");
    PARSE_ERROR((const uint8_t *)"\xa3\x06\x08\x01", 4, "not closed");

    /* the last of a oneof wins: dim_param after dim_value; a sequence
     * type after tensor_type drops the tensor type */
    w = wr(inner, sizeof inner);
    tg_pb_put_tag(&w, 1, TG_PB_VARINT);
    tg_pb_put_varint(&w, 3);
    tg_pb_put_bytes(&w, 2, "N", 1);
    ni = w.len; /* a Dimension */
    w = wr(mid, sizeof mid);
    tg_pb_put_bytes(&w, 1, inner, ni); /* TensorShapeProto.dim */
    nm = w.len;
    w = wr(inner, sizeof inner);
    tg_pb_put_bytes(&w, 2, mid, nm); /* Tensor.shape */
    ni = w.len;
    w = wr(mid, sizeof mid);
    tg_pb_put_bytes(&w, 1, inner, ni); /* TypeProto.tensor_type */
    nm = w.len;
    w = wr(inner, sizeof inner);
    tg_pb_put_bytes(&w, 1, "v", 1);
    tg_pb_put_bytes(&w, 2, mid, nm); /* ValueInfoProto.type */
    ni = w.len;
    w = wr(mid, sizeof mid);
    tg_pb_put_bytes(&w, 11, inner, ni); /* GraphProto.input */
    nm = w.len;
    w = wr(s, sizeof s);
    tg_pb_put_bytes(&w, 7, mid, nm);
    m = NULL;
    CHECK_OK(onnx_model_parse(s, w.len, &m));
    if (m && m->graph && m->graph->n_input == 1) {
        const onnx_type *ty = &m->graph->input[0].type;
        CHECK(ty->has_tensor_type && ty->n_dims == 1 &&
              ty->dims[0].kind == ONNX_DIM_PARAM && str_is(ty->dims[0].param, "N"));
        onnx_model_free(roundtrip(m, NULL));
    }
    onnx_model_free(m);
    /* ... now TypeProto = {tensor_type, sequence_type} */
    w = wr(inner, sizeof inner);
    tg_pb_put_bytes(&w, 1, "", 0);
    tg_pb_put_bytes(&w, 4, "", 0);
    ni = w.len;
    w = wr(mid, sizeof mid);
    tg_pb_put_bytes(&w, 2, inner, ni);
    nm = w.len;
    w = wr(inner, sizeof inner);
    tg_pb_put_bytes(&w, 11, mid, nm);
    ni = w.len;
    w = wr(s, sizeof s);
    tg_pb_put_bytes(&w, 7, inner, ni);
    m = NULL;
    CHECK_OK(onnx_model_parse(s, w.len, &m));
    if (m && m->graph && m->graph->n_input == 1) {
        CHECK(!m->graph->input[0].type.has_tensor_type);
        CHECK(m->graph->input[0].type.unknown.len == 2);
    }
    onnx_model_free(m);

    /* an empty input is an empty (valid) model */
    m = NULL;
    CHECK_OK(onnx_model_parse("", 0, &m));
    CHECK(m && !m->graph && !m->has_ir_version);
    onnx_model_free(m);
    CHECK_FAILS(onnx_model_parse(NULL, 3, &m), TG_ERR_ARG, "NULL");
    CHECK_FAILS(onnx_model_load_file("/nonexistent.onnx", &m), TG_ERR_IO,
                "cannot open");
}

/* k subgraphs nested in attributes (graph.node.attribute.g ...), written
 * back to front into a buffer of cap bytes; returns the start */
static uint8_t *nested_model(uint8_t *end, size_t cap, long k, size_t *len)
{
    uint8_t *p = end;
    const uint8_t *limit = end - cap;
    for (long i = 0; i < 3 * k + 1 && p - limit > 24; i++) {
        static const uint32_t fields[3] = {6, 5, 1}; /* g, attribute, node */
        uint32_t field = i == 3 * k ? 7 : fields[i % 3];
        size_t n = (size_t)(end - p);
        uint8_t tmp[16];
        tg_pb_writer w = wr(tmp, sizeof tmp);
        tg_pb_put_tag(&w, field, TG_PB_LEN);
        tg_pb_put_varint(&w, n);
        p -= w.len;
        memcpy(p, tmp, w.len);
    }
    *len = (size_t)(end - p);
    return p;
}

static void test_deep_nesting(void)
{
    /* 1 + 3k nested messages: k = 33 is at the limit of 100 */
    size_t cap = 4 << 20, len;
    uint8_t *space = malloc(cap);
    uint8_t *b = nested_model(space + cap, cap, 33, &len);
    onnx_model *m = NULL;
    CHECK_OK(onnx_model_parse(b, len, &m));
    if (m) {
        onnx_model *m2 = roundtrip(m, NULL);
        CHECK(m2 != NULL);
        onnx_model_free(m2);
        onnx_model_free(m);
    }
    b = nested_model(space + cap, cap, 34, &len);
    PARSE_ERROR(b, len, "nested deeper than 100 levels");
    /* what crashes protobuf-c 1.4.1 (stack overflow): 200,000 levels */
    b = nested_model(space + cap, cap, 200000, &len);
    CHECK(len > 2000000);
    PARSE_ERROR(b, len, "subgraphs nested too deeply");
    free(space);

    /* a hand-built model nested past the limit does not serialize */
    onnx_graph *top = calloc(1, sizeof *top), *g = top;
    for (int i = 0; i < 40; i++) {
        g->node = calloc(1, sizeof *g->node);
        g->n_node = 1;
        g->node[0].attribute = calloc(1, sizeof *g->node[0].attribute);
        g->node[0].n_attribute = 1;
        g = g->node[0].attribute[0].g = calloc(1, sizeof *g);
    }
    onnx_model *mm = calloc(1, sizeof *mm);
    mm->graph = top;
    uint8_t *out = NULL;
    size_t n;
    CHECK_FAILS(onnx_model_serialize(mm, &out, &n), TG_ERR_ARG, "nested deeper");
    CHECK(out == NULL);
    onnx_model_free(mm);
}

/* a node of nothing but empty attributes: each costs 2 bytes of input and
 * ~200 bytes of memory, past the parse budget (64 bytes per input byte) */
static void test_alloc_budget(void)
{
    size_t k = 1 << 20, n = 0;
    uint8_t *b = malloc(2 * k + 32);
    b[n++] = 0x3a; /* ModelProto.graph */
    uint8_t hdr[24];
    tg_pb_writer w = wr(hdr, sizeof hdr);
    tg_pb_put_varint(&w, 2 * k + 4 + 4);
    tg_pb_put_tag(&w, 1, TG_PB_LEN); /* GraphProto.node */
    tg_pb_put_varint(&w, 2 * k);
    memcpy(b + n, hdr, w.len);
    n += w.len;
    for (size_t i = 0; i < k; i++) {
        b[n++] = 0x2a; /* NodeProto.attribute, empty */
        b[n++] = 0x00;
    }
    memcpy(b + n, "\x12\x02gg", 4); /* GraphProto.name, after the node */
    n += 4;
    PARSE_ERROR(b, n, "not a plausible model");
    /* a quarter as many fit */
    size_t small = k / 4;
    n = 0;
    b[n++] = 0x3a;
    w = wr(hdr, sizeof hdr);
    tg_pb_put_varint(&w, 2 * small + 4);
    tg_pb_put_tag(&w, 1, TG_PB_LEN);
    tg_pb_put_varint(&w, 2 * small);
    memcpy(b + n, hdr, w.len);
    n += w.len;
    for (size_t i = 0; i < small; i++, n += 2)
        memcpy(b + n, "\x2a\x00", 2);
    onnx_model *m = NULL;
    CHECK_OK(onnx_model_parse(b, n, &m));
    CHECK(m && m->graph && m->graph->n_node == 1 &&
          m->graph->node[0].n_attribute == small);
    onnx_model_free(m);
    free(b);
}

/* ---- every truncation, random bit flips, saved crashes ------------------------------ */

static void exercise_or_fail(const uint8_t *b, size_t n, const char *what,
                             size_t k)
{
    const char *problem = onnx_exercise(b, n);
    tt_checks++;
    if (problem)
        tt_fail(__FILE__, __LINE__, "%s (%zu): %s", what, k, problem);
}

static void test_truncations(void)
{
    for (int i = 0; i < N_FIXTURES; i++) {
        size_t n;
        uint8_t *b = fixture_bytes(fixtures[i], &n);
        if (!b)
            continue;
        int parsed = 0;
        for (size_t k = 0; k <= n; k++) {
            /* a copy of exactly k bytes: ASan/valgrind see any overread */
            uint8_t *cut = malloc(k ? k : 1);
            memcpy(cut, b, k);
            exercise_or_fail(cut, k, fixtures[i], k);
            onnx_model *m = NULL;
            if (onnx_model_parse(cut, k, &m) == TG_OK)
                parsed++;
            else
                CHECK(tg_last_status() == TG_ERR_IO);
            tg_clear_error();
            onnx_model_free(m);
            free(cut);
        }
        CHECK(parsed >= 2 && parsed < (int)n); /* at field boundaries only */
        free(b);
    }
}

static void test_bit_flips(void)
{
    tg_generator *gen = tg_generator_new(1234);
    for (int i = 0; i < N_FIXTURES; i++) {
        size_t n;
        uint8_t *b = fixture_bytes(fixtures[i], &n);
        if (!b)
            continue;
        uint8_t *copy = malloc(n);
        for (int trial = 0; trial < 400; trial++) {
            memcpy(copy, b, n);
            int flips = 1 + (int)(tg_generator_next(gen) % 4);
            for (int f = 0; f < flips; f++) {
                uint64_t r = tg_generator_next(gen);
                copy[(r >> 8) % n] ^= (uint8_t)(1u << (r & 7));
            }
            exercise_or_fail(copy, n, fixtures[i], (size_t)trial);
        }
        free(copy);
        free(b);
    }
    tg_generator_free(gen);
}

static void test_crash_corpus(void)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/onnx_crashes", data_dir);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".md"))
            continue;
        char path[2400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        uint8_t *b = read_file(path, &n);
        CHECK(b != NULL);
        if (b)
            exercise_or_fail(b, n, e->d_name, 0);
        free(b);
        count++;
    }
    closedir(d);
    printf("     (%d saved crash inputs replayed)\n", count);
}

int main(void)
{
    const char *env = getenv("TG_TEST_DATA_DIR");
    if (env) {
        snprintf(data_dir, sizeof data_dir, "%s", env);
    } else { /* tests/data beside this source file */
        snprintf(data_dir, sizeof data_dir, "%s", __FILE__);
        char *slash = strrchr(data_dir, '/');
        if (slash)
            snprintf(slash + 1, sizeof data_dir - (size_t)(slash + 1 - data_dir),
                     "data");
        else
            snprintf(data_dir, sizeof data_dir, "data");
    }
    RUN(test_pb_varints);
    RUN(test_pb_fields);
    RUN(test_fixtures);
    RUN(test_raw_equals_typed);
    RUN(test_tensor_errors);
    RUN(test_tensor_from_tg);
    RUN(test_built_model);
    RUN(test_hostile_fields);
    RUN(test_deep_nesting);
    RUN(test_alloc_budget);
    RUN(test_truncations);
    RUN(test_bit_flips);
    RUN(test_crash_corpus);
    return tt_finish();
}
