/* ONNX sequences and optionals from C (docs/ONNX.md, "Sequences and
 * optionals"): models written here as protobuf bytes, run through
 * tg_onnx_run in both modes under the API's names (S[0], S[1], ...),
 * their error paths, hostile sequence and optional types at load, the
 * SequenceProto / OptionalProto reader (values_proto.c) on valid, hostile,
 * truncated and bit-flipped bytes. Values against the specs:
 * tests/python/test_onnx_sequences.py and onnx's node cases
 * (tests/onnx_conformance). */
#include "harness.h"
#include "onnx/protobuf.h"
#include "onnx/values.h"
#include "tg/tg.h"

#include <stdlib.h>
#include <string.h>

/* ---- protobuf bytes written by hand ------------------------------------------------- */
typedef struct pbuf {
    uint8_t b[2048];
    size_t n;
} pbuf;

static tg_pb_writer wr(pbuf *p)
{
    return (tg_pb_writer){.buf = p->b, .len = p->n, .cap = sizeof p->b};
}
static void pv(pbuf *p, uint32_t f, uint64_t v)
{
    tg_pb_writer w = wr(p);
    tg_pb_put_tag(&w, f, TG_PB_VARINT);
    tg_pb_put_varint(&w, v);
    p->n = w.len;
}
static void pbytes(pbuf *p, uint32_t f, const void *d, size_t n)
{
    tg_pb_writer w = wr(p);
    tg_pb_put_bytes(&w, f, d, n);
    p->n = w.len;
}
static void ps(pbuf *p, uint32_t f, const char *s) { pbytes(p, f, s, strlen(s)); }
static void pm(pbuf *p, uint32_t f, const pbuf *m) { pbytes(p, f, m->b, m->n); }

/* TypeProto of a tensor of type elem: [n], n == -2: [] (a scalar), n == -1:
 * no shape */
static pbuf tensor_type(int elem, int n)
{
    pbuf t = {0}, tt = {0}, shape = {0}, dim = {0};
    pv(&tt, 1, (uint64_t)elem);
    if (n >= 0) {
        pv(&dim, 1, (uint64_t)n);
        pm(&shape, 1, &dim);
        pm(&tt, 2, &shape);
    } else if (n == -2) {
        pbytes(&tt, 2, "", 0);
    }
    pm(&t, 1, &tt);
    return t;
}
/* TypeProto wrapping inner as a sequence (4) or optional (9) */
static pbuf wrap_type(int field, const pbuf *inner)
{
    pbuf t = {0}, w = {0};
    pm(&w, 1, inner);
    pm(&t, (uint32_t)field, &w);
    return t;
}
static pbuf value_info(const char *name, const pbuf *type)
{
    pbuf v = {0};
    ps(&v, 1, name);
    pm(&v, 2, type);
    return v;
}
static pbuf node(const char *op, const char *name, int n_in, const char *const *in,
                 const char *out)
{
    pbuf nd = {0};
    for (int i = 0; i < n_in; i++)
        ps(&nd, 1, in[i]);
    ps(&nd, 2, out);
    ps(&nd, 3, name);
    ps(&nd, 4, op);
    return nd;
}
/* a ModelProto at opset 17 of graph g's bytes */
static tg_onnx_model *model_of(const pbuf *g)
{
    pbuf m = {0}, op = {0};
    pv(&m, 1, 8);
    pv(&op, 2, 17);
    pm(&m, 8, &op);
    pm(&m, 7, g);
    return tg_onnx_load_bytes(m.b, m.n);
}
static pbuf model_bytes(const pbuf *g)
{
    pbuf m = {0}, op = {0};
    pv(&m, 1, 8);
    pv(&op, 2, 17);
    pm(&m, 8, &op);
    pm(&m, 7, g);
    return m;
}

/* Identity of a sequence of float [2]: S -> Y */
static pbuf identity_graph(void)
{
    pbuf g = {0}, t = tensor_type(1, 2), st = wrap_type(4, &t);
    pbuf n = node("Identity", "id", 1, (const char *[]){"S"}, "Y");
    pbuf in = value_info("S", &st), out = value_info("Y", &st);
    pm(&g, 1, &n);
    ps(&g, 2, "g");
    pm(&g, 11, &in);
    pm(&g, 12, &out);
    return g;
}

/* SequenceConstruct(a, b) -> SequenceAt(., p) -> y */
static pbuf at_graph(void)
{
    pbuf g = {0}, f2 = tensor_type(1, 2), i0 = tensor_type(7, -2);
    pbuf n1 = node("SequenceConstruct", "mk", 2, (const char *[]){"a", "b"}, "s");
    pbuf n2 = node("SequenceAt", "at", 2, (const char *[]){"s", "p"}, "y");
    pbuf a = value_info("a", &f2), b = value_info("b", &f2), p = value_info("p", &i0);
    pbuf y = value_info("y", &f2);
    pm(&g, 1, &n1);
    pm(&g, 1, &n2);
    ps(&g, 2, "g");
    pm(&g, 11, &a);
    pm(&g, 11, &b);
    pm(&g, 11, &p);
    pm(&g, 12, &y);
    return g;
}

static tg_tensor *vec2(double a, double b)
{
    return tt_tensor(TG_FLOAT32, 1, (const int64_t[]){2}, (const double[]){a, b});
}

static void test_identity_both_modes(void)
{
    pbuf g = identity_graph();
    tg_onnx_model *m = model_of(&g);
    CHECK(m != NULL);
    if (!m)
        return;
    tg_onnx_value_info vi;
    CHECK_OK(tg_onnx_input_info(m, 0, &vi));
    CHECK(vi.kind == TG_ONNX_SEQUENCE && vi.dtype == TG_FLOAT32 && vi.ndim == 1 &&
          vi.shape[0] == 2);
    tg_scope_begin();
    tg_tensor *x0 = vec2(1, 2), *x1 = vec2(3, 4), *xi = tt_tensor(TG_INT64, 1,
                                                               (const int64_t[]){2},
                                                               (const double[]){1, 2});
    for (int mode = 0; mode < 2; mode++) {
        tg_onnx_mode md = mode ? TG_ONNX_GRAPH : TG_ONNX_EAGER;
        tg_state_dict *out = NULL;
        CHECK_OK(tg_onnx_run(m, md, 2, (const char *[]){"S[1]", "S[0]"},
                             (tg_tensor *[]){x1, x0}, &out, NULL));
        CHECK(out && tg_state_dict_size(out) == 2);
        if (out && tg_state_dict_has(out, "Y[0]") && tg_state_dict_has(out, "Y[1]")) {
            CHECK(tt_same(tg_state_dict_get(out, "Y[0]"), x0));
            CHECK(tt_same(tg_state_dict_get(out, "Y[1]"), x1));
        }
        tg_state_dict_free(out);
        /* the empty sequence: no entries */
        CHECK_OK(tg_onnx_run(m, md, 0, NULL, NULL, &out, NULL));
        CHECK(out && tg_state_dict_size(out) == 0);
        tg_state_dict_free(out);
        CHECK_FAILS(tg_onnx_run(m, md, 1, (const char *[]){"S[1]"}, (tg_tensor *[]){x0}, &out,
                                NULL), TG_ERR_ARG, "element 'S[0]' of sequence input 'S' is "
                    "missing");
        CHECK_FAILS(tg_onnx_run(m, md, 2, (const char *[]){"S[0]", "S[0]"},
                                (tg_tensor *[]){x0, x0}, &out, NULL), TG_ERR_ARG,
                    "element 'S[0]' is given twice");
        CHECK_FAILS(tg_onnx_run(m, md, 1, (const char *[]){"S[0]"}, (tg_tensor *[]){xi}, &out,
                                NULL), TG_ERR_ARG, "element 'S[0]' has dtype int64");
        CHECK_FAILS(tg_onnx_run(m, md, 1, (const char *[]){"S"}, (tg_tensor *[]){x0}, &out,
                                NULL), TG_ERR_ARG, "give its elements as 'S[0]'");
        CHECK_FAILS(tg_onnx_run(m, md, 1, (const char *[]){"S[99999999999999999999]"},
                                (tg_tensor *[]){x0}, &out, NULL), TG_ERR_ARG,
                    "is not an input");
    }
    tg_scope_end();
    tg_onnx_free(m);
}

static void test_sequence_at_errors(void)
{
    pbuf g = at_graph();
    tg_onnx_model *m = model_of(&g);
    CHECK(m != NULL);
    if (!m)
        return;
    tg_scope_begin();
    tg_tensor *a = vec2(1, 2), *b = vec2(3, 4);
    tg_tensor *p_last = tg_scalar(TG_INT64, -1), *p_out = tg_scalar(TG_INT64, 2);
    for (int mode = 0; mode < 2; mode++) {
        tg_onnx_mode md = mode ? TG_ONNX_GRAPH : TG_ONNX_EAGER;
        tg_state_dict *out = NULL;
        CHECK_OK(tg_onnx_run(m, md, 3, (const char *[]){"a", "b", "p"},
                             (tg_tensor *[]){a, b, p_last}, &out, NULL));
        CHECK(out && tg_state_dict_has(out, "y") && tt_same(tg_state_dict_get(out, "y"), b));
        tg_state_dict_free(out);
        CHECK_FAILS(tg_onnx_run(m, md, 3, (const char *[]){"a", "b", "p"},
                                (tg_tensor *[]){a, b, p_out}, &out, NULL), TG_ERR_IO,
                    "ONNX node 'at' (SequenceAt): position 2 is out of range for a sequence "
                    "of 2 tensors (-2 to 1)");
    }
    /* in a graph, a position the build does not know */
    tg_graph *gr = tg_graph_new("seq");
    CHECK_OK(tg_graph_begin(gr));
    CHECK_ERROR(tg_onnx_build(m, 0, NULL, NULL, NULL), TG_ERR_UNSUPPORTED,
                "ONNX node 'at' (SequenceAt): the position ('p') is known only when the model "
                "runs");
    tg_graph_end();
    tg_graph_free(gr);
    tg_scope_end();
    tg_onnx_free(m);
}

/* hostile sequence and optional types: refused at load, never a crash */
static void test_hostile_types(void)
{
    pbuf f2 = tensor_type(1, 2);
    pbuf seq = wrap_type(4, &f2), opt = wrap_type(9, &f2);
    pbuf seqseq = wrap_type(4, &seq), optopt = wrap_type(9, &opt), seqopt = wrap_type(4, &opt);
    pbuf optseq = wrap_type(9, &seq);
    pbuf empty_seq = {0}, bad_elem = {0}, truncated = {0}, map = {0}, inner = {0};
    pbytes(&empty_seq, 4, "", 0);            /* sequence_type without elem_type */
    pbytes(&inner, 1, "\x0a\x05\x08", 3);    /* elem_type: a TypeProto cut short */
    pm(&bad_elem, 4, &inner);
    pbytes(&truncated, 4, "\x0a\x80", 2);    /* a length varint cut short */
    pbytes(&map, 5, "\x08\x07", 2);
    struct {
        const pbuf *type;
        tg_status st;
        const char *needle;
    } cases[] = {
        {&seqseq, TG_ERR_UNSUPPORTED, "graph input 'S' is a sequence of sequences"},
        {&optopt, TG_ERR_UNSUPPORTED, "is an optional of optionals"},
        {&seqopt, TG_ERR_UNSUPPORTED, "is a sequence of optionals"},
        {&empty_seq, TG_ERR_IO, "its sequence type has no element type"},
        {&bad_elem, TG_ERR_IO, "graph input 'S': its element type"},
        {&truncated, TG_ERR_IO, "its sequence type is malformed"},
        {&map, TG_ERR_UNSUPPORTED, "graph input 'S' is a map"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pbuf g = {0}, t = tensor_type(1, 2), st = wrap_type(4, &t);
        pbuf n = node("Identity", "id", 1, (const char *[]){"S"}, "Y");
        pbuf in = value_info("S", cases[k].type), out = value_info("Y", &st);
        pm(&g, 1, &n);
        pm(&g, 11, &in);
        pm(&g, 12, &out);
        CHECK_ERROR(model_of(&g), cases[k].st, cases[k].needle);
    }
    /* an optional sequence loads: kind and element */
    pbuf g = {0};
    pbuf n = node("Identity", "id", 1, (const char *[]){"S"}, "Y");
    pbuf in = value_info("S", &optseq), out = value_info("Y", &optseq);
    pm(&g, 1, &n);
    pm(&g, 11, &in);
    pm(&g, 12, &out);
    tg_onnx_model *m = model_of(&g);
    tg_onnx_value_info vi;
    CHECK(m && tg_onnx_output_info(m, 0, &vi) == TG_OK &&
          vi.kind == TG_ONNX_OPTIONAL_SEQUENCE && vi.dtype == TG_FLOAT32 && vi.ndim == 1);
    tg_onnx_free(m);
}

/* bit flips and truncations of the models: loaded, built and run in
 * both modes or refused, never a crash (ASan) */
static void test_model_flips(void)
{
    pbuf graphs[2] = {identity_graph(), at_graph()};
    uint32_t seed = 12345;
    tg_scope_begin();
    tg_tensor *a = vec2(1, 2), *p = tg_scalar(TG_INT64, 0);
    for (int gi = 0; gi < 2; gi++) {
        pbuf mb = model_bytes(&graphs[gi]);
        for (int trial = 0; trial < 300; trial++) {
            uint8_t bytes[2048];
            size_t n = mb.n;
            memcpy(bytes, mb.b, n);
            if (trial % 3 == 0) {
                n = (size_t)trial % (mb.n + 1);
            } else {
                for (int f = 0; f < 1 + trial % 3; f++) {
                    seed = seed * 1103515245u + 12345u;
                    bytes[(seed >> 8) % n] ^= (uint8_t)(1u << ((seed >> 4) % 8));
                }
            }
            tg_onnx_model *m = tg_onnx_load_bytes(bytes, n);
            for (int mode = 0; m && mode < 2; mode++) {
                tg_state_dict *out = NULL;
                const char *names[] = {"S[0]", "a", "b", "p"};
                tg_tensor *ins[] = {a, a, a, p};
                if (tg_onnx_run(m, mode ? TG_ONNX_GRAPH : TG_ONNX_EAGER, gi ? 3 : 1,
                                gi ? names + 1 : names, gi ? ins + 1 : ins, &out, NULL) == TG_OK)
                    tg_state_dict_free(out);
            }
            tg_onnx_free(m);
            tg_clear_error();
        }
    }
    tg_scope_end();
    CHECK(1);
}

/* ---- SequenceProto / OptionalProto -------------------------------------------------- */
static pbuf tensor_proto(int data_type, int n, const void *raw, size_t raw_len)
{
    pbuf t = {0};
    pv(&t, 1, (uint64_t)n);
    pv(&t, 2, (uint64_t)data_type);
    pbytes(&t, 9, raw, raw_len);
    return t;
}

static void test_value_protos(void)
{
    float f[3] = {1, 2, 3};
    int64_t i[2] = {5, 6};
    pbuf t3 = tensor_proto(1, 3, f, sizeof f), t2i = tensor_proto(7, 2, i, sizeof i);
    pbuf bad_t = tensor_proto(1, 5, f, sizeof f); /* dims say 5, the data holds 3 */
    pbuf seq = {0}, mixed = {0}, empty = {0}, badseq = {0}, seqseq = {0};
    pv(&seq, 2, 1);
    pm(&seq, 3, &t3);
    pm(&seq, 3, &t3);
    pv(&mixed, 2, 1);
    pm(&mixed, 3, &t3);
    pm(&mixed, 3, &t2i);
    pv(&empty, 2, 1);
    pm(&badseq, 3, &bad_t);
    pm(&seqseq, 5, &seq);
    onnx_value_data d;
    CHECK_OK(onnx_value_data_parse(seq.b, seq.n, false, &d));
    CHECK(d.is_seq && d.n == 2 && !d.none && tg_numel(d.elem[1]) == 3);
    onnx_value_data_clear(&d);
    CHECK_OK(onnx_value_data_parse(empty.b, empty.n, false, &d));
    CHECK(d.is_seq && d.n == 0);
    onnx_value_data_clear(&d);
    CHECK_FAILS(onnx_value_data_parse(mixed.b, mixed.n, false, &d), TG_ERR_IO,
                "sequence element 1 is int64; element 0 is float32");
    CHECK_FAILS(onnx_value_data_parse(badseq.b, badseq.n, false, &d), TG_ERR_IO,
                "SequenceProto.tensor_values[0]");
    CHECK_FAILS(onnx_value_data_parse(seqseq.b, seqseq.n, false, &d), TG_ERR_UNSUPPORTED,
                "a sequence of sequences");
    CHECK_FAILS(onnx_value_data_parse("\x1a\x05\x08", 3, false, &d), TG_ERR_IO,
                "SequenceProto is malformed");
    CHECK_FAILS(onnx_value_data_parse("\x1d\x00\x00\x00\x00", 5, false, &d), TG_ERR_IO,
                "tensor_values is not a message");
    /* optionals: none, a tensor, a sequence, and their mismatches */
    pbuf none = {0}, ot = {0}, os = {0}, lie = {0}, undef_val = {0};
    pv(&ot, 2, 1);
    pm(&ot, 3, &t3);
    pv(&os, 2, 3);
    pm(&os, 5, &seq);
    pv(&lie, 2, 3); /* says sequence, holds a tensor */
    pm(&lie, 3, &t3);
    pm(&undef_val, 3, &t3);
    CHECK_OK(onnx_value_data_parse(none.b, none.n, true, &d));
    CHECK(d.none && d.n == 0);
    onnx_value_data_clear(&d);
    CHECK_OK(onnx_value_data_parse(ot.b, ot.n, true, &d));
    CHECK(!d.none && !d.is_seq && d.n == 1);
    onnx_value_data_clear(&d);
    CHECK_OK(onnx_value_data_parse(os.b, os.n, true, &d));
    CHECK(d.is_seq && d.n == 2);
    onnx_value_data_clear(&d);
    CHECK_FAILS(onnx_value_data_parse(lie.b, lie.n, true, &d), TG_ERR_IO,
                "elem_type 3 does not match");
    CHECK_FAILS(onnx_value_data_parse(undef_val.b, undef_val.n, true, &d), TG_ERR_IO,
                "elem_type 0 does not match");
    /* every truncation and many bit flips: an error or a value, never a crash */
    const pbuf *all[] = {&seq, &mixed, &os, &ot};
    uint32_t seed = 99;
    for (size_t k = 0; k < 4; k++)
        for (size_t cut = 0; cut <= all[k]->n; cut++)
            for (int flip = 0; flip < 4; flip++) {
                uint8_t b[2048];
                memcpy(b, all[k]->b, all[k]->n);
                if (flip && cut) {
                    seed = seed * 1103515245u + 12345u;
                    b[(seed >> 8) % cut] ^= (uint8_t)(1u << ((seed >> 4) % 8));
                }
                if (onnx_value_data_parse(b, cut, k >= 2, &d) == TG_OK)
                    onnx_value_data_clear(&d);
                tg_clear_error();
            }
    CHECK(1);
}

int main(void)
{
    RUN(test_identity_both_modes);
    RUN(test_sequence_at_errors);
    RUN(test_hostile_types);
    RUN(test_model_flips);
    RUN(test_value_protos);
    return tt_finish();
}
