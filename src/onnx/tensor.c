/* TensorProto <-> tg_tensor: checked conversion of the types tensorgraph
 * has, widening of those it lacks (INT8, FLOAT16, UINT64, ...), and the
 * names of ONNX data and attribute types. */
#include "onnx/ops.h"

#include "core/tensor_impl.h"
#include "onnx/protobuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BIG_ENDIAN 1
#else
#define HOST_BIG_ENDIAN 0
#endif

/* ==== tensors ==================================================================== */

const char *onnx_data_type_name(int32_t dt)
{
    static const char *const names[] = {
        "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16",
        "INT32", "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE",
        "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    if (dt >= 0 && dt < (int32_t)(sizeof names / sizeof *names))
        return names[dt];
    return "?";
}

const char *onnx_attribute_type_name(int32_t type)
{
    static const char *const names[] = {
        "UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS",
        "INTS", "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR",
        "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
    if (type >= 0 && type < (int32_t)(sizeof names / sizeof *names))
        return names[type];
    return "?";
}

static int tg_of_onnx(int32_t dt)
{
    switch (dt) {
    case ONNX_FLOAT: return TG_FLOAT32;
    case ONNX_DOUBLE: return TG_FLOAT64;
    case ONNX_INT32: return TG_INT32;
    case ONNX_INT64: return TG_INT64;
    case ONNX_UINT8: return TG_UINT8;
    case ONNX_BOOL: return TG_BOOL;
    default: return -1;
    }
}

tg_status onnx_dtype_to_tg(int32_t data_type, tg_dtype *out)
{
    int dt = tg_of_onnx(data_type);
    if (dt < 0)
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: data type %s (%d) is not "
                         "supported (tensorgraph has FLOAT, DOUBLE, INT32, "
                         "INT64, UINT8, BOOL)", onnx_data_type_name(data_type),
                         (int)data_type);
    if (out)
        *out = (tg_dtype)dt;
    return TG_OK;
}

int32_t onnx_dtype_from_tg(tg_dtype dt)
{
    static const int32_t map[TG_NUM_DTYPES] = {
        [TG_FLOAT32] = ONNX_FLOAT, [TG_FLOAT64] = ONNX_DOUBLE,
        [TG_INT32] = ONNX_INT32,   [TG_INT64] = ONNX_INT64,
        [TG_UINT8] = ONNX_UINT8,   [TG_BOOL] = ONNX_BOOL};
    return (int)dt >= 0 && dt < TG_NUM_DTYPES ? map[dt] : ONNX_UNDEFINED;
}

/* the typed field a data type's values live in when not in raw_data */
static const char *typed_field(int32_t dt, const onnx_tensor *t, size_t *count)
{
    switch (dt) {
    case ONNX_FLOAT: *count = t->n_float_data; return "float_data";
    case ONNX_DOUBLE: *count = t->n_double_data; return "double_data";
    case ONNX_INT64: *count = t->n_int64_data; return "int64_data";
    default: *count = t->n_int32_data; return "int32_data";
    }
}

/* the first typed field other than `own` that holds values, or NULL */
static const char *stray_field(const onnx_tensor *t, const char *own)
{
    static const char *const names[] = {"float_data", "int32_data",
                                        "int64_data", "double_data"};
    size_t counts[] = {t->n_float_data, t->n_int32_data, t->n_int64_data,
                       t->n_double_data};
    for (int i = 0; i < 4; i++)
        if (counts[i] && (!own || strcmp(names[i], own) != 0))
            return names[i];
    return NULL;
}

#define TERR(st, ...) tg__error_null(st, __VA_ARGS__)

/* checks the dims: the element count or -1 with an error set */
static int64_t checked_numel(const onnx_tensor *tp, const char *nm)
{
    if (tp->n_dims > TG_MAX_DIMS) {
        TERR(TG_ERR_UNSUPPORTED, "onnx: TensorProto '%s' has %zu dims; "
             "tensorgraph supports at most %d", nm, tp->n_dims, TG_MAX_DIMS);
        return -1;
    }
    bool zero = false;
    for (size_t i = 0; i < tp->n_dims; i++) {
        int64_t d = tp->dims[i];
        if (d < 0 || d > ONNX_MAX_ELEMENTS) {
            TERR(TG_ERR_IO, "onnx: TensorProto '%s': dims[%zu] = %lld is %s",
                 nm, i, (long long)d, d < 0 ? "negative" : "over 2^31");
            return -1;
        }
        zero |= d == 0;
    }
    if (zero)
        return 0;
    int64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (numel > ONNX_MAX_ELEMENTS / tp->dims[i]) {
            char buf[200];
            TERR(TG_ERR_IO, "onnx: TensorProto '%s': dims %s give more than "
                 "2^31 elements", nm,
                 tg_shape_str((int)tp->n_dims, tp->dims, buf, sizeof buf));
            return -1;
        }
        numel *= tp->dims[i];
    }
    return numel;
}

/* checks that the data present matches dims; false with an error set */
static bool check_data(const onnx_tensor *tp, const char *nm, int64_t numel,
                       size_t esize)
{
    char shape[200];
    tg_shape_str((int)tp->n_dims, tp->dims, shape, sizeof shape);
    const char *tname = onnx_data_type_name(tp->data_type);
    size_t count;
    const char *own = typed_field(tp->data_type, tp, &count);
    if (tp->raw_data.data) {
        const char *stray = stray_field(tp, NULL);
        if (stray) {
            TERR(TG_ERR_IO, "onnx: TensorProto '%s' has both raw_data and %s",
                 nm, stray);
            return false;
        }
        if (tp->raw_data.len != (size_t)numel * esize) {
            TERR(TG_ERR_IO, "onnx: TensorProto '%s': raw_data has %zu bytes, "
                 "expected %zu (%lld %s elements of %zu bytes, dims %s)", nm,
                 tp->raw_data.len, (size_t)numel * esize, (long long)numel,
                 tname, esize, shape);
            return false;
        }
        return true;
    }
    const char *stray = stray_field(tp, own);
    if (stray) {
        TERR(TG_ERR_IO, "onnx: TensorProto '%s': %s values are in %s; expected "
             "%s or raw_data", nm, tname, stray, own);
        return false;
    }
    if (count != (size_t)numel) {
        TERR(TG_ERR_IO, "onnx: TensorProto '%s': %s has %zu values, expected "
             "%lld (dims %s)%s", nm, own, count, (long long)numel, shape,
             count ? "" : "; raw_data is absent too");
        return false;
    }
    if (tp->data_type == ONNX_UINT8)
        for (size_t i = 0; i < count; i++)
            if (tp->int32_data[i] < 0 || tp->int32_data[i] > 255) {
                TERR(TG_ERR_IO, "onnx: TensorProto '%s': int32_data[%zu] = %d "
                     "is out of range for UINT8", nm, i, (int)tp->int32_data[i]);
                return false;
            }
    return true;
}

static void swap_bytes(uint8_t *p, int64_t n, size_t esize)
{
    for (int64_t i = 0; i < n && esize > 1; i++, p += esize)
        for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

tg_tensor *onnx_tensor_to_tg(const onnx_tensor *tp)
{
    if (!tp)
        return TERR(TG_ERR_ARG, "onnx_tensor_to_tg: NULL tensor");
    const char *nm = tp->name ? tp->name : "";
    if (tp->data_location == ONNX_DATA_EXTERNAL)
        return TERR(TG_ERR_UNSUPPORTED, "onnx: TensorProto '%s' keeps its data "
                    "in an external file (data_location = EXTERNAL), which is "
                    "not supported", nm);
    if (tp->data_type == ONNX_UNDEFINED)
        return TERR(TG_ERR_IO, "onnx: TensorProto '%s' has no data_type", nm);
    int dt = tg_of_onnx(tp->data_type);
    if (dt < 0)
        return TERR(TG_ERR_UNSUPPORTED, "onnx: TensorProto '%s' has data type "
                    "%s (%d), which is not supported (tensorgraph reads FLOAT, "
                    "DOUBLE, INT32, INT64, UINT8, BOOL)", nm,
                    onnx_data_type_name(tp->data_type), (int)tp->data_type);
    int64_t numel = checked_numel(tp, nm);
    if (numel < 0)
        return NULL;
    size_t esize = tg_dtype_size((tg_dtype)dt);
    if (!check_data(tp, nm, numel, esize))
        return NULL;
    tg_tensor *t = tg__alloc((tg_dtype)dt, (int)tp->n_dims, tp->dims);
    if (!t)
        return NULL;
    uint8_t *out = (uint8_t *)tg__base(t);
    if (tp->raw_data.data) {
        if (numel)
            memcpy(out, tp->raw_data.data, (size_t)numel * esize);
        if (HOST_BIG_ENDIAN)
            swap_bytes(out, numel, esize);
    } else if (dt == TG_FLOAT32 || dt == TG_INT32) {
        const void *src = dt == TG_FLOAT32 ? (const void *)tp->float_data
                                           : (const void *)tp->int32_data;
        if (numel)
            memcpy(out, src, (size_t)numel * 4);
    } else if (dt == TG_FLOAT64 || dt == TG_INT64) {
        const void *src = dt == TG_FLOAT64 ? (const void *)tp->double_data
                                           : (const void *)tp->int64_data;
        if (numel)
            memcpy(out, src, (size_t)numel * 8);
    } else { /* UINT8 and BOOL from int32_data (range checked above) */
        for (int64_t i = 0; i < numel; i++)
            out[i] = (uint8_t)tp->int32_data[i];
    }
    if (dt == TG_BOOL) /* any non-zero value is true: store it as 1 */
        for (int64_t i = 0; i < numel; i++)
            out[i] = out[i] != 0;
    return tg__publish(t);
}

/* t's elements in C order, in t's own dtype (no conversion through
 * double, which would round large int64 values) */
static void copy_c_order(const tg_tensor *t, void *out)
{
    size_t es = tg_dtype_size(t->dtype);
    if (tg_is_contiguous(t)) {
        if (t->numel)
            memcpy(out, tg__base(t), (size_t)t->numel * es);
        return;
    }
    for (int64_t i = 0; i < t->numel; i++)
        memcpy((char *)out + i * (int64_t)es, tg__elem_ptr(t, i), es);
}

tg_status onnx_tensor_from_tg(const tg_tensor *t, const char *name, bool raw,
                              onnx_tensor *out)
{
    if (!t || !out)
        return tg__error(TG_ERR_ARG, "onnx_tensor_from_tg: NULL tensor or output");
    memset(out, 0, sizeof *out);
    size_t n = (size_t)t->numel, es = tg_dtype_size(t->dtype);
    out->data_type = onnx_dtype_from_tg(t->dtype);
    out->has_data_type = true;
    out->n_dims = (size_t)t->ndim;
    if (t->ndim && !(out->dims = malloc((size_t)t->ndim * sizeof *out->dims)))
        goto nomem;
    for (int i = 0; i < t->ndim; i++)
        out->dims[i] = t->shape[i];
    if (name && !(out->name = strdup(name)))
        goto nomem;
    if (raw || t->dtype == TG_UINT8 || t->dtype == TG_BOOL) {
        uint8_t *buf = malloc(n * es + 1);
        if (!buf)
            goto nomem;
        copy_c_order(t, buf);
        buf[n * es] = 0;
        if (raw) {
            if (HOST_BIG_ENDIAN)
                swap_bytes(buf, (int64_t)n, es);
            out->raw_data = (onnx_bytes){buf, n * es};
            return TG_OK;
        }
        /* UINT8 and BOOL values go in int32_data */
        if (n && !(out->int32_data = malloc(n * sizeof(int32_t)))) {
            free(buf);
            goto nomem;
        }
        for (size_t i = 0; i < n; i++)
            out->int32_data[i] = buf[i];
        out->n_int32_data = n;
        free(buf);
        return TG_OK;
    }
    void *dst = n ? malloc(n * es) : NULL;
    if (n && !dst)
        goto nomem;
    if (n)
        copy_c_order(t, dst);
    switch (t->dtype) {
    case TG_FLOAT32: out->float_data = dst; out->n_float_data = n; break;
    case TG_FLOAT64: out->double_data = dst; out->n_double_data = n; break;
    case TG_INT32: out->int32_data = dst; out->n_int32_data = n; break;
    default: out->int64_data = dst; out->n_int64_data = n; break;
    }
    return TG_OK;
nomem:
    onnx_tensor_clear(out);
    return tg__error(TG_ERR_NOMEM, "onnx_tensor_from_tg: out of memory");
}

/* ==== types tensorgraph lacks, widened (see tg/onnx.h) ========================== */
tg_status onnx_storage_dtype(int32_t t, tg_dtype *out)
{
    switch (t) {
    case ONNX_FLOAT: case ONNX_FLOAT16: case ONNX_BFLOAT16: *out = TG_FLOAT32; return TG_OK;
    case ONNX_DOUBLE: *out = TG_FLOAT64; return TG_OK;
    case ONNX_INT8: case ONNX_INT16: case ONNX_UINT16: case ONNX_INT32:
        *out = TG_INT32; return TG_OK;
    case ONNX_UINT32: case ONNX_UINT64: case ONNX_INT64: *out = TG_INT64; return TG_OK;
    case ONNX_UINT8: *out = TG_UINT8; return TG_OK;
    case ONNX_BOOL: *out = TG_BOOL; return TG_OK;
    default:
        return tg__error(TG_ERR_UNSUPPORTED, "ONNX data type %s (%d) is not supported",
                         onnx_data_type_name(t), (int)t);
    }
}

static float half_to_float(uint16_t h, bool bfloat)
{
    if (bfloat) {
        uint32_t bits = (uint32_t)h << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    int e = (h >> 10) & 31, mant = h & 1023;
    float v;
    if (e == 0)
        v = ldexpf((float)mant, -24);
    else if (e == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexpf((float)(mant | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* uint64_data (field 11) of a TensorProto, which the format layer keeps
 * in `unknown`: packed or not. Returns the count, -1 on malformed bytes. */
static int64_t unknown_uint64s(const onnx_tensor *tp, uint64_t *out, int64_t cap)
{
    tg_pb_reader r;
    tg_pb_field f;
    int64_t n = 0;
    int k;
    if (!tp->unknown.data)
        return 0;
    tg_pb_reader_init(&r, tp->unknown.data, tp->unknown.data, tp->unknown.len);
    while ((k = tg_pb_next(&r, &f)) == 1) {
        if (f.number != 11)
            continue;
        if (f.wire == TG_PB_VARINT) {
            if (out && n < cap)
                out[n] = f.u;
            n++;
        } else if (f.wire == TG_PB_LEN) {
            const uint8_t *p = f.data, *end = f.data + f.len;
            while (p < end) {
                uint64_t v;
                if (!tg_pb_read_varint(&p, end, &v))
                    return -1;
                if (out && n < cap)
                    out[n] = v;
                n++;
            }
        } else {
            return -1;
        }
    }
    return k < 0 ? -1 : n;
}

tg_tensor *onnx_tensor_to_tg_wide(const onnx_tensor *tp)
{
    int32_t t = tp->data_type;
    int esize;
    switch (t) {
    case ONNX_INT8: esize = 1; break;
    case ONNX_INT16: case ONNX_UINT16: case ONNX_FLOAT16: case ONNX_BFLOAT16: esize = 2; break;
    case ONNX_UINT32: esize = 4; break;
    case ONNX_UINT64: esize = 8; break;
    default: return onnx_tensor_to_tg(tp);
    }
    const char *nm = tp->name ? tp->name : "";
    if (tp->data_location == ONNX_DATA_EXTERNAL)
        return tg__error_null(TG_ERR_UNSUPPORTED, "onnx: TensorProto '%s' keeps its "
                              "data in an external file, which is not supported", nm);
    if (tp->n_dims > TG_MAX_DIMS)
        return tg__error_null(TG_ERR_UNSUPPORTED, "onnx: TensorProto '%s' has %zu dims "
                              "(at most %d)", nm, tp->n_dims, TG_MAX_DIMS);
    int64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0 || (tp->dims[i] && numel > ONNX_MAX_ELEMENTS / tp->dims[i]))
            return tg__error_null(TG_ERR_IO, "onnx: TensorProto '%s' has bad dims "
                                  "(negative or over %lld elements)", nm,
                                  (long long)ONNX_MAX_ELEMENTS);
        numel *= tp->dims[i];
    }
    tg_dtype dt;
    onnx_storage_dtype(t, &dt);
    bool u64field = t == ONNX_UINT32 || t == ONNX_UINT64;
    int64_t n64 = u64field ? unknown_uint64s(tp, NULL, 0) : 0;
    if (n64 < 0)
        return tg__error_null(TG_ERR_IO, "onnx: TensorProto '%s': malformed uint64_data", nm);
    bool ok = tp->raw_data.data ? tp->raw_data.len == (size_t)numel * (size_t)esize
              : u64field        ? n64 == numel
                                : tp->n_int32_data == (size_t)numel;
    if (!ok)
        return tg__error_null(TG_ERR_IO, "onnx: TensorProto '%s' (%s) holds a wrong "
                              "amount of data for %lld elements", nm,
                              onnx_data_type_name(t), (long long)numel);
    int64_t shape[TG_MAX_DIMS];
    for (size_t i = 0; i < tp->n_dims; i++)
        shape[i] = tp->dims[i];
    tg_tensor *out = tg__alloc(dt, (int)tp->n_dims, shape);
    if (!out)
        return NULL;
    uint64_t *u64 = NULL;
    if (!tp->raw_data.data && u64field && numel) {
        u64 = malloc((size_t)numel * sizeof *u64);
        if (!u64) {
            tg_release(out);
            return tg__error_null(TG_ERR_NOMEM, "onnx: out of memory");
        }
        unknown_uint64s(tp, u64, numel);
    }
    const uint8_t *raw = tp->raw_data.data;
    for (int64_t i = 0; i < numel; i++) {
        uint64_t bits = 0;
        if (raw)
            for (int b = 0; b < esize; b++)
                bits |= (uint64_t)raw[i * esize + b] << (8 * b);
        else if (u64)
            bits = u64[i];
        else
            bits = (uint32_t)tp->int32_data[i];
        switch (t) {
        case ONNX_INT8: ((int32_t *)tg__base(out))[i] = (int8_t)(uint8_t)bits; break;
        case ONNX_INT16: ((int32_t *)tg__base(out))[i] = (int16_t)(uint16_t)bits; break;
        case ONNX_UINT16: ((int32_t *)tg__base(out))[i] = (uint16_t)bits; break;
        case ONNX_UINT32: ((int64_t *)tg__base(out))[i] = (uint32_t)bits; break;
        case ONNX_UINT64: ((int64_t *)tg__base(out))[i] = (int64_t)bits; break;
        default:
            ((float *)tg__base(out))[i] = half_to_float((uint16_t)bits, t == ONNX_BFLOAT16);
        }
    }
    free(u64);
    return tg__publish(out);
}

