/* safetensors checkpoints and state dicts: bit-exact round trips of every
 * dtype, metadata, the byte layout, hostile files (truncated, corrupted,
 * inconsistent headers) and atomic saves that leave the old file intact. */
#include "harness.h"
#include "io/io_impl.h"
#include "io/json.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static char *path_in(const char *name)
{
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

static void write_all(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

/* entries of dir other than those named (NULL-terminated list) */
static int stray_files(const char *const *expected)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        bool known = false;
        for (int i = 0; expected[i]; i++)
            known |= strcmp(e->d_name, expected[i]) == 0;
        if (!known) {
            fprintf(stderr, "stray file: %s\n", e->d_name);
            n++;
        }
    }
    if (d)
        closedir(d);
    return n;
}

static bool same_bits(const tg_tensor *a, const tg_tensor *b)
{
    if (!a || !b || tg_dtype_of(a) != tg_dtype_of(b) || tg_ndim(a) != tg_ndim(b))
        return false;
    for (int i = 0; i < tg_ndim(a); i++)
        if (tg_shape(a)[i] != tg_shape(b)[i])
            return false;
    size_t nb = (size_t)tg_numel(a) * tg_dtype_size(tg_dtype_of(a));
    unsigned char *x = malloc(nb + 1), *y = malloc(nb + 1);
    tg_copy_to(a, tg_dtype_of(a), x);
    tg_copy_to(b, tg_dtype_of(b), y);
    bool same = memcmp(x, y, nb) == 0;
    free(x);
    free(y);
    return same;
}

/* ---- round trips ------------------------------------------------------------------ */

#define NT 13
static void make_tensors(tg_tensor **t, const char **names)
{
    float f32[6] = {1.5f, -0.0f, 1e-40f /* subnormal */, 3.4e38f, -1.0f / 0.0f, 0};
    uint32_t nan_bits = 0x7fc01234u; /* a NaN payload must survive */
    memcpy(&f32[5], &nan_bits, 4);
    double f64[4] = {3.141592653589793, -2.5e-310, 1.0 / 0.0, -1e308};
    int32_t i32[5] = {INT32_MIN, -1, 0, 1, INT32_MAX};
    int64_t i64[3] = {INT64_MIN, 42, INT64_MAX};
    uint8_t u8[7] = {0, 1, 127, 128, 200, 254, 255};
    uint8_t bools[5] = {1, 0, 0, 1, 1};
    t[0] = tg_from_data(TG_FLOAT32, 2, (int64_t[]){2, 3}, f32);
    t[1] = tg_from_data(TG_FLOAT64, 1, (int64_t[]){4}, f64);
    t[2] = tg_from_data(TG_INT32, 1, (int64_t[]){5}, i32);
    t[3] = tg_from_data(TG_INT64, 3, (int64_t[]){1, 3, 1}, i64);
    t[4] = tg_from_data(TG_UINT8, 1, (int64_t[]){7}, u8); /* odd size: alignment */
    t[5] = tg_from_data(TG_BOOL, 1, (int64_t[]){5}, bools);
    t[6] = tg_scalar(TG_FLOAT32, -7.25);                    /* 0-d */
    t[7] = tg_scalar(TG_INT64, 123456789012345);            /* 0-d */
    t[8] = tg_scalar(TG_BOOL, 1);                           /* 0-d */
    t[9] = tg_zeros(TG_FLOAT64, 2, (int64_t[]){0, 3});      /* empty */
    t[10] = tg_zeros(TG_UINT8, 1, (int64_t[]){0});          /* empty */
    t[11] = tg_transpose(tg_arange(TG_FLOAT32, 0, 12, 1), 0, 0); /* a view */
    t[12] = tg_transpose(tg_reshape(tg_arange(TG_INT32, 0, 12, 1), 2, (int64_t[]){3, 4}), 0, 1);
    static const char *nm[NT] = {"f32", "f64", "i32", "i64", "u8", "bool", "scalar.f32",
                                 "scalar.i64", "scalar.bool", "empty.f64", "empty.u8",
                                 "view", "layers.0.weight \"quoted\" \\ / \xc3\xa9\xe2\x82\xac"};
    for (int i = 0; i < NT; i++)
        names[i] = nm[i];
}

static void test_round_trip_every_dtype(void)
{
    tg_tensor *t[NT];
    const char *names[NT];
    make_tensors(t, names);
    CHECK(!tg_is_contiguous(t[12]));
    tg_kv meta[4] = {{"format", "pt"},
                     {"note", "line1\nline2\t\"q\" \\ \x01 caf\xc3\xa9 \xf0\x9f\x98\x80"},
                     {"", "empty key"},
                     {"empty", ""}};
    const char *p = path_in("all.safetensors");
    CHECK_OK(tg_safetensors_save(p, NT, names, t, 4, meta));
    tg_state_dict *sd = tg_safetensors_load(p);
    CHECK(sd != NULL);
    if (!sd)
        return;
    CHECK(tg_state_dict_size(sd) == NT);
    for (int i = 0; i < NT; i++) {
        CHECK(strcmp(tg_state_dict_name(sd, i), names[i]) == 0); /* file order */
        tg_tensor *back = tg_state_dict_get(sd, names[i]);
        if (!same_bits(t[i], back))
            tt_fail(__FILE__, __LINE__, "tensor '%s' differs after the round trip", names[i]);
        tt_checks++;
        CHECK(tg_is_contiguous(back));
    }
    CHECK(tg_ndim(tg_state_dict_get(sd, "scalar.f32")) == 0);
    CHECK_SHAPE(tg_state_dict_get(sd, "empty.f64"), 0, 3);
    CHECK(tg_state_dict_meta_size(sd) == 4);
    for (int i = 0; i < 4; i++)
        CHECK(strcmp(tg_state_dict_meta(sd, meta[i].key), meta[i].value) == 0);
    CHECK(tg_state_dict_meta(sd, "absent") == NULL);
    /* the same bytes parse from memory */
    size_t len = 0;
    unsigned char *bytes = read_all(p, &len);
    tg_state_dict *sd2 = tg_safetensors_parse(bytes, len);
    CHECK(sd2 && tg_state_dict_size(sd2) == NT);
    tg_state_dict_free(sd2);
    free(bytes);
    tg_state_dict_free(sd);
    unlink(p);
}

static void test_layout(void)
{
    /* header length, '{', 8-byte alignment, data in decreasing element size */
    tg_tensor *t[3] = {tg_ones(TG_UINT8, 1, (int64_t[]){3}), tg_ones(TG_FLOAT64, 1, (int64_t[]){2}),
                       tg_ones(TG_INT32, 1, (int64_t[]){1})};
    const char *names[3] = {"a", "b", "c"};
    const char *p = path_in("layout.safetensors");
    CHECK_OK(tg_safetensors_save(p, 3, names, t, 0, NULL));
    size_t len = 0;
    unsigned char *b = read_all(p, &len);
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n |= (uint64_t)b[i] << (8 * i);
    CHECK(len == 8 + n + 3 + 16 + 4);
    CHECK((8 + n) % 8 == 0);
    CHECK(b[8] == '{');
    char *hdr = strndup((char *)b + 8, n);
    CHECK(strstr(hdr, "\"b\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]}") != NULL);
    CHECK(strstr(hdr, "\"c\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[16,20]}") != NULL);
    CHECK(strstr(hdr, "\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[20,23]}") != NULL);
    CHECK(strstr(hdr, "__metadata__") == NULL);
    double one;
    memcpy(&one, b + 8 + n, 8);
    CHECK(one == 1.0);
    free(hdr);
    free(b);
    /* an empty checkpoint is valid too */
    CHECK_OK(tg_safetensors_save(p, 0, NULL, NULL, 0, NULL));
    tg_state_dict *sd = tg_safetensors_load(p);
    CHECK(sd && tg_state_dict_size(sd) == 0 && tg_state_dict_meta_size(sd) == 0);
    tg_state_dict_free(sd);
    unlink(p);
}

/* ---- hostile files ------------------------------------------------------------- */

/* a file from a header text and data bytes */
static unsigned char *build(const char *hdr, const void *data, size_t dlen, size_t *len)
{
    size_t n = strlen(hdr);
    unsigned char *b = malloc(8 + n + dlen + 1);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(b + 8, hdr, n);
    if (dlen)
        memcpy(b + 8 + n, data, dlen);
    *len = 8 + n + dlen;
    return b;
}

/* one check: sd (from `how`: parse or load) is NULL with TG_ERR_IO naming
 * `needle`; frees sd */
static void expect_io_error(tg_state_dict *sd, const char *how, const char *needle,
                            int line)
{
    tt_checks++;
    if (sd || tg_last_status() != TG_ERR_IO || (needle && !strstr(tg_last_error(), needle)))
        tt_fail(__FILE__, line, "%s: expected TG_ERR_IO with \"%s\", got %s: %s", how,
                needle ? needle : "", sd ? "success" : tg_status_name(tg_last_status()),
                tg_last_error());
    tg_state_dict_free(sd);
}

/* bad from memory and as a file, with TG_ERR_IO naming `needle` */
static void expect_bad_bytes(const unsigned char *b, size_t len, const char *needle,
                             int line)
{
    tg_clear_error();
    expect_io_error(tg_safetensors_parse(b, len), "parse", needle, line);
    const char *p = path_in("bad.safetensors");
    write_all(p, b, len);
    tg_clear_error();
    expect_io_error(tg_safetensors_load(p), "load", needle, line);
    unlink(p);
    tg_clear_error();
}

static void expect_bad_(const char *hdr, const void *data, size_t dlen,
                        const char *needle, int line)
{
    size_t len = 0;
    unsigned char *b = build(hdr, data, dlen, &len);
    expect_bad_bytes(b, len, needle, line);
    free(b);
}
#define EXPECT_BAD(hdr, data, dlen, needle) expect_bad_(hdr, data, dlen, needle, __LINE__)

static void test_bad_headers(void)
{
    const float d[4] = {1, 2, 3, 4};
    const uint8_t bools[2] = {1, 2};
    /* a well-formed file first, to show the helpers make valid files */
    size_t len = 0;
    unsigned char *ok = build("{\"x\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}",
                              d, 16, &len);
    tg_state_dict *sd = tg_safetensors_parse(ok, len);
    CHECK(sd && tg_state_dict_size(sd) == 1);
    tg_state_dict_free(sd);
    free(ok);

    EXPECT_BAD("{not json}", NULL, 0, "not valid JSON");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}", d, 16, "not valid JSON");
    EXPECT_BAD("{\"x\":1,}", NULL, 0, "not valid JSON");
    EXPECT_BAD("{\"x\":\"\\u0000\"}", NULL, 0, "not valid JSON");
    EXPECT_BAD("{\"x\xff\":1}", NULL, 0, "UTF-8");
    EXPECT_BAD("[1, 2]", NULL, 0, "does not start with '{'");
    EXPECT_BAD(" {}", NULL, 0, "does not start with '{'");
    EXPECT_BAD("{}x", NULL, 0, "not valid JSON");
    EXPECT_BAD("{\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]"
               "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", NULL, 0,
               "too deep");
    EXPECT_BAD("{\"x\":5}", NULL, 0, "not an object");
    /* missing fields, unknown dtype */
    EXPECT_BAD("{\"x\":{\"shape\":[4],\"data_offsets\":[0,16]}}", d, 16, "lacks \"dtype\"");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"data_offsets\":[0,16]}}", d, 16, "lacks \"shape\"");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[4]}}", d, 16, "lacks \"data_offsets\"");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F16\",\"shape\":[8],\"data_offsets\":[0,16]}}", d, 16, "\"F16\"");
    EXPECT_BAD("{\"x\":{\"dtype\":7,\"shape\":[4],\"data_offsets\":[0,16]}}", d, 16, "dtype");
    /* shapes */
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[-4],\"data_offsets\":[0,16]}}", d, 16, "shape entry 0");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[4.0],\"data_offsets\":[0,16]}}", d, 16, "shape entry 0");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,16]}}", d, 16, "\"shape\"");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,4],\"data_offsets\":[0,16]}}",
               d, 16, "at most 8");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,16]}}",
               d, 16, "overflows");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,16]}}",
               d, 16, "shape entry 0");
    /* shape/offset mismatch, offsets out of range */
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", d, 16, "needs 12");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F64\",\"shape\":[4],\"data_offsets\":[0,16]}}", d, 16, "needs 32");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,32]}}", d, 16, "past the end");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[16,0]}}", d, 16, "begin > end");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0]}}", d, 16, "two non-negative");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,-16]}}", d, 16, "two non-negative");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[18446744073709551615,"
               "18446744073709551615]}}", d, 16, "past the end");
    /* overlaps, holes, trailing bytes */
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]},"
               "\"y\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", d, 16, "overlaps");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
               "\"y\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", d, 16, "overlaps");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
               "\"y\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", d, 16, "belong to no tensor");
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", d, 16, "16 data bytes");
    /* names and metadata */
    EXPECT_BAD("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
               "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", d, 16, "appears twice");
    EXPECT_BAD("{\"__metadata__\":{\"a\":1}}", NULL, 0, "not a string");
    EXPECT_BAD("{\"__metadata__\":[\"a\"]}", NULL, 0, "not an object");
    EXPECT_BAD("{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", NULL, 0, "appears twice");
    EXPECT_BAD("{\"__metadata__\":{},\"__metadata__\":{}}", NULL, 0, "appears twice");
    /* bools are 0 or 1 */
    EXPECT_BAD("{\"x\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]}}", bools, 2, "byte 2");
    /* header length: too short, larger than the file */
    unsigned char tiny[5] = {1, 0, 0, 0, 0};
    expect_bad_bytes(tiny, 5, "too few", __LINE__);
    unsigned char zero[8] = {0};
    expect_bad_bytes(zero, 8, "too small", __LINE__);
    /* accepted oddities: trailing spaces, whitespace inside, escapes in names */
    ok = build("{ \"\\u00e9\\ud83d\\ude00\" : { \"data_offsets\" : [0,16], \"shape\" : [ 4 ] , "
               "\"dtype\" : \"F32\" , \"extra\": null }, \"__metadata__\": {\"k\": \"\\\"v\\n\"} }   ",
               d, 16, &len);
    sd = tg_safetensors_parse(ok, len);
    CHECK(sd && tg_state_dict_has(sd, "\xc3\xa9\xf0\x9f\x98\x80"));
    CHECK(sd && strcmp(tg_state_dict_meta(sd, "k"), "\"v\n") == 0);
    tg_state_dict_free(sd);
    free(ok);
}

static void test_truncated_and_corrupted(void)
{
    tg_tensor *t[NT];
    const char *names[NT];
    make_tensors(t, names);
    const char *p = path_in("src.safetensors");
    CHECK_OK(tg_safetensors_save(p, NT, names, t, 1, (tg_kv[]){{"a", "b"}}));
    size_t len = 0;
    unsigned char *b = read_all(p, &len);
    unlink(p);
    /* every truncation point fails (memory; a few as files) */
    for (size_t cut = 0; cut < len; cut++) {
        tg_clear_error();
        tg_state_dict *sd = tg_safetensors_parse(b, cut);
        tt_checks++;
        if (sd || tg_last_status() != TG_ERR_IO)
            tt_fail(__FILE__, __LINE__, "truncated at %zu of %zu: got %s", cut, len,
                    sd ? "success" : tg_status_name(tg_last_status()));
        tg_state_dict_free(sd);
    }
    size_t cuts[] = {0, 4, 8, 9, 40, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        expect_bad_bytes(b, cuts[i], NULL, __LINE__);
    expect_bad_bytes(b, len - 1, "truncated", __LINE__);
    /* a flipped byte in the header length */
    for (int i = 0; i < 8; i++) {
        unsigned char *c = malloc(len);
        memcpy(c, b, len);
        c[i] ^= 0xff;
        /* the low byte moves the end of the header into the data or back
         * into the JSON; higher bytes make it larger than the file */
        expect_bad_bytes(c, len, i == 0 ? NULL : "header length", __LINE__);
        c[i] ^= 0xff ^ 0x01; /* off by a little: JSON cut short or running into data */
        expect_bad_bytes(c, len, NULL, __LINE__);
        free(c);
    }
    /* random corruption of the header: a clean error or a valid dict, never
     * a crash (the sanitizer and valgrind runs watch this) */
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++)
        hlen |= (uint64_t)b[i] << (8 * i);
    tg_generator *g = tg_generator_new(1234);
    unsigned char *c = malloc(len);
    int loaded = 0;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(c, b, len);
        int flips = 1 + (int)(tg_generator_next(g) % 3);
        for (int f = 0; f < flips; f++) {
            size_t at = 8 + tg_generator_next(g) % hlen;
            c[at] = (unsigned char)(tg_generator_next(g) & 0xff);
        }
        tg_clear_error();
        tg_state_dict *sd = tg_safetensors_parse(c, len);
        if (sd) {
            loaded++;
            for (int i = 0; i < tg_state_dict_size(sd); i++)
                (void)tg_state_dict_tensor(sd, i);
        } else if (tg_last_status() != TG_ERR_IO) {
            tt_fail(__FILE__, __LINE__, "corruption gave %s: %s",
                    tg_status_name(tg_last_status()), tg_last_error());
        }
        tt_checks++;
        tg_state_dict_free(sd);
    }
    (void)loaded; /* some flips (inside a name, say) still give a valid file */
    free(c);
    tg_generator_free(g);
    free(b);

    /* no file, a directory */
    CHECK_ERROR(tg_safetensors_load(path_in("missing.safetensors")), TG_ERR_IO, "cannot open");
    CHECK_ERROR(tg_safetensors_load(dir), TG_ERR_IO, "not a regular file");
    CHECK_ERROR(tg_safetensors_load(NULL), TG_ERR_ARG, "NULL");
    CHECK_ERROR(tg_safetensors_parse(NULL, 10), TG_ERR_ARG, "NULL");
}

/* ---- atomic saves --------------------------------------------------------------- */

static void test_atomic_save(void)
{
    const char *p = path_in("model.safetensors");
    const char *expected[] = {"model.safetensors", "sub", NULL};
    tg_tensor *v1 = tg_arange(TG_FLOAT32, 0, 1000, 1);
    tg_tensor *v2 = tg_full(TG_FLOAT64, 1, (int64_t[]){500}, 2.5);
    const char *nm[1] = {"w"};
    CHECK_OK(tg_safetensors_save(p, 1, nm, &v1, 0, NULL));
    size_t len1 = 0;
    unsigned char *old = read_all(p, &len1);

    /* the disk "fills up" at several points: the old file stays, no temp left */
    int64_t points[] = {0, 3, 8, 50, 2000, 3999};
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        tg__io_fail_after_bytes = points[i];
        CHECK_FAILS(tg_safetensors_save(p, 1, nm, &v2, 0, NULL), TG_ERR_IO, "unchanged");
        tg__io_fail_after_bytes = -1;
        size_t len = 0;
        unsigned char *now = read_all(p, &len);
        CHECK(now && len == len1 && memcmp(now, old, len) == 0);
        free(now);
        CHECK(stray_files(expected) == 0);
    }
    tg_state_dict *sd = tg_safetensors_load(p);
    CHECK(sd && same_bits(tg_state_dict_get(sd, "w"), v1));
    tg_state_dict_free(sd);

    /* the path is a directory: rename fails, the directory survives */
    const char *sub = path_in("sub");
    CHECK(mkdir(sub, 0755) == 0);
    CHECK_FAILS(tg_safetensors_save(sub, 1, nm, &v2, 0, NULL), TG_ERR_IO, "sub");
    struct stat st;
    CHECK(stat(sub, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(stray_files(expected) == 0);
    /* the directory does not exist */
    CHECK_FAILS(tg_safetensors_save(path_in("nodir/x.safetensors"), 1, nm, &v2, 0, NULL),
                TG_ERR_IO, "temporary file");
    /* a directory we may not write to (root may write anywhere: skipped) */
    if (geteuid() != 0) {
        char q[300];
        snprintf(q, sizeof q, "%s/model.safetensors", sub);
        CHECK_OK(tg_safetensors_save(q, 1, nm, &v1, 0, NULL));
        chmod(sub, 0555);
        CHECK_FAILS(tg_safetensors_save(q, 1, nm, &v2, 0, NULL), TG_ERR_IO, "temporary file");
        chmod(sub, 0755);
        sd = tg_safetensors_load(q);
        CHECK(sd && same_bits(tg_state_dict_get(sd, "w"), v1));
        tg_state_dict_free(sd);
        unlink(q);
    }
    rmdir(sub);

    /* a successful save replaces the file */
    CHECK_OK(tg_safetensors_save(p, 1, nm, &v2, 0, NULL));
    sd = tg_safetensors_load(p);
    CHECK(sd && same_bits(tg_state_dict_get(sd, "w"), v2));
    tg_state_dict_free(sd);
    const char *only[] = {"model.safetensors", NULL};
    CHECK(stray_files(only) == 0);
    free(old);
    unlink(p);
}

static void test_save_errors(void)
{
    tg_tensor *a = tg_ones(TG_FLOAT32, 1, (int64_t[]){2});
    tg_tensor *two[2] = {a, a};
    const char *p = path_in("e.safetensors");
    CHECK_FAILS(tg_safetensors_save(p, 2, (const char *[]){"x", "x"}, two, 0, NULL),
                TG_ERR_ARG, "twice");
    CHECK_FAILS(tg_safetensors_save(p, 1, (const char *[]){"__metadata__"}, two, 0, NULL),
                TG_ERR_ARG, "reserved");
    CHECK_FAILS(tg_safetensors_save(p, 1, (const char *[]){""}, two, 0, NULL),
                TG_ERR_ARG, "empty");
    tg_tensor *nul[1] = {NULL};
    CHECK_FAILS(tg_safetensors_save(p, 1, (const char *[]){"x"}, nul, 0, NULL),
                TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_safetensors_save(p, 1, (const char *[]){"x"}, two, 2,
                                    (tg_kv[]){{"k", "1"}, {"k", "2"}}),
                TG_ERR_ARG, "twice");
    CHECK_FAILS(tg_safetensors_save(p, 1, (const char *[]){"x"}, two, 1,
                                    (tg_kv[]){{"k", NULL}}),
                TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_safetensors_save(NULL, 1, (const char *[]){"x"}, two, 0, NULL),
                TG_ERR_ARG, "path");
    CHECK_FAILS(tg_safetensors_save(p, -1, NULL, NULL, 0, NULL), TG_ERR_ARG, "counts");
    CHECK_FAILS(tg_safetensors_save_dict(p, NULL), TG_ERR_ARG, "NULL");
    CHECK(access(p, F_OK) != 0); /* nothing was written */
}

/* ---- state dicts ------------------------------------------------------------------ */

static void test_state_dict_api(void)
{
    tg_state_dict *sd = tg_state_dict_new();
    tg_tensor *a = tg_ones(TG_FLOAT32, 1, (int64_t[]){2});
    tg_tensor *b = tg_zeros(TG_INT64, 0, NULL);
    CHECK_OK(tg_state_dict_add(sd, "a", a));
    CHECK_OK(tg_state_dict_add(sd, "b", b));
    CHECK_FAILS(tg_state_dict_add(sd, "a", b), TG_ERR_ARG, "already");
    CHECK_FAILS(tg_state_dict_add(sd, "__metadata__", b), TG_ERR_ARG, "reserved");
    CHECK_FAILS(tg_state_dict_add(sd, "c", NULL), TG_ERR_ARG, "NULL");
    CHECK(tg_state_dict_size(sd) == 2);
    CHECK(tg_state_dict_get(sd, "a") == a); /* held by reference */
    CHECK(tg_state_dict_tensor(sd, 1) == b);
    CHECK_ERROR(tg_state_dict_get(sd, "zz"), TG_ERR_ARG, "'zz'");
    CHECK_ERROR(tg_state_dict_tensor(sd, 2), TG_ERR_INDEX, "out of range");
    CHECK_ERROR(tg_state_dict_name(sd, -1), TG_ERR_INDEX, "out of range");
    CHECK(tg_state_dict_has(sd, "b") && !tg_state_dict_has(sd, "c"));
    CHECK_OK(tg_state_dict_set_meta(sd, "k", "v1"));
    CHECK_OK(tg_state_dict_set_meta(sd, "k", "v2"));
    CHECK_OK(tg_state_dict_set_meta(sd, "j", "w"));
    CHECK(tg_state_dict_meta_size(sd) == 2);
    CHECK(strcmp(tg_state_dict_meta(sd, "k"), "v2") == 0);
    CHECK(strcmp(tg_state_dict_meta_key(sd, 1), "j") == 0);
    CHECK(strcmp(tg_state_dict_meta_value(sd, 1), "w") == 0);
    CHECK_FAILS(tg_state_dict_set_meta(sd, NULL, "x"), TG_ERR_ARG, "key");
    /* saved, then loaded back */
    const char *p = path_in("sd.safetensors");
    CHECK_OK(tg_safetensors_save_dict(p, sd));
    tg_state_dict *ld = tg_safetensors_load(p);
    CHECK(ld && tg_state_dict_size(ld) == 2 && same_bits(tg_state_dict_get(ld, "a"), a));
    CHECK(ld && strcmp(tg_state_dict_meta(ld, "j"), "w") == 0);
    /* tensors outlive their dict */
    tg_tensor *kept = tg_state_dict_get(ld, "b");
    tg_state_dict_free(ld);
    CHECK(tg_ndim(kept) == 0 && tg_item(kept) == 0);
    tg_state_dict_free(sd);
    tg_state_dict_free(NULL);
    unlink(p);
}

/* ---- the JSON reader underneath ---------------------------------------------------- */

static void test_json_reader(void)
{
    char err[160];
    const char *doc = "{\"a\": [0, 18446744073709551615, 18446744073709551616, -1, 2.5, 1e3],"
                      " \"s\": \"x\\u00e9\\ud83d\\ude00\\n\", \"t\": true, \"n\": null}";
    tg_json *j = tg_json_parse(doc, strlen(doc), err, sizeof err);
    CHECK(j && j->type == TG_JSON_OBJECT && j->n == 4);
    if (j) {
        const tg_json *a = tg_json_get(j, "a");
        CHECK(a && a->type == TG_JSON_ARRAY && a->n == 6);
        CHECK(a->items[0].is_uint && a->items[0].u == 0);
        CHECK(a->items[1].is_uint && a->items[1].u == UINT64_MAX);
        CHECK(!a->items[2].is_uint && a->items[2].num == 18446744073709551616.0);
        CHECK(!a->items[3].is_uint && a->items[3].num == -1);
        CHECK(!a->items[4].is_uint && a->items[4].num == 2.5);
        CHECK(!a->items[5].is_uint && a->items[5].num == 1000);
        CHECK(strcmp(tg_json_get(j, "s")->str, "x\xc3\xa9\xf0\x9f\x98\x80\n") == 0);
        CHECK(tg_json_get(j, "t")->boolean && tg_json_get(j, "n")->type == TG_JSON_NULL);
        CHECK(tg_json_get(j, "zz") == NULL);
    }
    tg_json_free(j);
    const char *bad[] = {"", "{", "[1,]", "01", "1.", "-", "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"",
                         "tru", "{\"a\" 1}", "{1: 2}", "\"\x01\"", "\"\xc0\x80\"", "\"\xed\xa0\x80\"",
                         "[1] 2", "\"abc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = tg_json_parse(bad[i], strlen(bad[i]), err, sizeof err);
        if (j)
            tt_fail(__FILE__, __LINE__, "JSON '%s' parsed", bad[i]);
        tt_checks++;
        CHECK(strstr(err, "at byte") != NULL);
        tg_json_free(j);
    }
    /* strings are escaped on output and read back the same */
    tg_strbuf b = {0};
    const char *raw = "q\" b\\ \x01\x1f\t\r\n \xc3\xa9";
    tg_json_put_string(&b, raw);
    j = tg_json_parse(b.data, b.len, err, sizeof err);
    CHECK(j && j->type == TG_JSON_STRING && strcmp(j->str, raw) == 0);
    tg_json_free(j);
    tg__strbuf_free(&b);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/tg_st_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_round_trip_every_dtype);
    RUN(test_layout);
    RUN(test_bad_headers);
    RUN(test_truncated_and_corrupted);
    RUN(test_atomic_save);
    RUN(test_save_errors);
    RUN(test_state_dict_api);
    RUN(test_json_reader);
    rmdir(dir);
    return tt_finish();
}
