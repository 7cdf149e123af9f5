/* The data layer: SHA-256 vectors, IDX round trips and every malformed
 * file, the MNIST dataset on generated files, the loader (counts, shuffle,
 * prefetch on/off identical, shutdown), and the fetch logic on small fake
 * files. Real MNIST only with TG_TEST_MNIST_DIR, the network only with
 * TG_TEST_NETWORK=1. */
#include "harness.h"
#include "data/data_impl.h"
#include "data/sha256.h"
#include "core/status_impl.h"

#include <dirent.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp_root[256];

/* ---- helpers ------------------------------------------------------------- */
static const char *tpath(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 512, "%s/%s", tmp_root, name);
    return p;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(fwrite(data, 1, n, f) == n);
    fclose(f);
}

/* an IDX header with the given magic and dims, then `payload` bytes of
 * pattern data; returns the total size written */
static size_t write_idx(const char *path, uint32_t magic, int ndim,
                        const uint32_t *dims, size_t payload)
{
    size_t n = 4 + 4 * (size_t)ndim + payload;
    unsigned char *b = malloc(n);
    uint32_t words[1 + 8];
    words[0] = magic;
    for (int i = 0; i < ndim; i++)
        words[1 + i] = dims[i];
    for (int i = 0; i <= ndim; i++) {
        b[4 * i] = (unsigned char)(words[i] >> 24);
        b[4 * i + 1] = (unsigned char)(words[i] >> 16);
        b[4 * i + 2] = (unsigned char)(words[i] >> 8);
        b[4 * i + 3] = (unsigned char)words[i];
    }
    for (size_t i = 4 + 4 * (size_t)ndim; i < n; i++)
        b[i] = (unsigned char)(i * 7);
    write_file(path, b, n);
    free(b);
    return n;
}

static int rm_entry(const char *p, const struct stat *s, int f, struct FTW *w)
{
    (void)s; (void)f; (void)w;
    return remove(p);
}

static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            n++;
    if (d)
        closedir(d);
    return n;
}

/* a fake MNIST split of n images (h x w) in dir */
static void write_mnist(const char *dir, const char *pre, int n, int h, int w,
                        int bad_label_at)
{
    char path[512];
    unsigned char *img = malloc((size_t)n * h * w), *lab = malloc((size_t)n);
    for (int i = 0; i < n * h * w; i++)
        img[i] = (unsigned char)((i * 31 + i / 7) % 256);
    for (int i = 0; i < n; i++)
        lab[i] = (unsigned char)(i == bad_label_at ? 10 : (i * 3) % 10);
    tg_tensor *ti = tg_from_data(TG_UINT8, 3, (int64_t[]){n, h, w}, img);
    tg_tensor *tl = tg_from_data(TG_UINT8, 1, (int64_t[]){n}, lab);
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte", dir, pre);
    CHECK_OK(tg_idx_save(path, ti));
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte", dir, pre);
    CHECK_OK(tg_idx_save(path, tl));
    free(img);
    free(lab);
}

static float mnist_norm(int v)
{
    return ((float)v / 255.0f - 0.1307f) / 0.3081f;
}

/* ---- SHA-256 ---------------------------------------------------------------- */
static void test_sha256_vectors(void)
{
    static const struct { const char *msg; const char *hex; } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
         "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char hex[65];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        tg__sha256_hex(v[i].msg, strlen(v[i].msg), hex);
        CHECK(!strcmp(hex, v[i].hex));
    }
    /* padding boundaries: lengths around 56 and 64 bytes */
    static const struct { int n; const char *hex; } b[] = {
        {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
        {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
        {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
        {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
        {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
    };
    char as[128];
    memset(as, 'a', sizeof as);
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        tg__sha256_hex(as, (size_t)b[i].n, hex);
        CHECK(!strcmp(hex, b[i].hex));
    }
    /* one million 'a', fed in uneven pieces (partial-block paths) */
    char *m = malloc(1000000);
    memset(m, 'a', 1000000);
    tg__sha256 c;
    unsigned char d[32];
    tg__sha256_init(&c);
    for (size_t off = 0, k = 1; off < 1000000; k = k * 7 % 997 + 1) {
        size_t n = k < 1000000 - off ? k : 1000000 - off;
        tg__sha256_update(&c, m + off, n);
        off += n;
    }
    tg__sha256_final(&c, d);
    static const unsigned char want[4] = {0xcd, 0xc7, 0x6e, 0x5c};
    CHECK(!memcmp(d, want, 4));
    tg__sha256_hex(m, 1000000, hex);
    CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    /* a file */
    write_file(tpath("million_a"), m, 1000000);
    CHECK_OK(tg__sha256_file(tpath("million_a"), hex));
    CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    CHECK_FAILS(tg__sha256_file(tpath("no_such_file"), hex), TG_ERR_IO, "no_such_file");
    remove(tpath("million_a"));
    free(m);
}

/* ---- IDX ------------------------------------------------------------------------ */
static void test_idx_roundtrip(void)
{
    uint8_t v[5 * 4 * 3];
    for (int i = 0; i < 60; i++)
        v[i] = (uint8_t)(i * 37 + 11);
    tg_tensor *t = tg_from_data(TG_UINT8, 3, (int64_t[]){5, 4, 3}, v);
    CHECK_OK(tg_idx_save(tpath("rt3.idx"), t));
    tg_tensor *u = tg_idx_load(tpath("rt3.idx"), 3);
    CHECK(u != NULL);
    if (!u)
        return;
    CHECK(tg_dtype_of(u) == TG_UINT8);
    CHECK_SHAPE(u, 5, 4, 3);
    CHECK(!memcmp(tg_data(u), v, sizeof v));
    CHECK(tg_idx_load(tpath("rt3.idx"), 0) != NULL); /* any ndim */
    struct stat st;
    CHECK(stat(tpath("rt3.idx"), &st) == 0 && st.st_size == 16 + 60);

    /* a non-contiguous view is written in C order */
    tg_tensor *tr = tg_transpose(t, 0, 2); /* [3, 4, 5] */
    CHECK_OK(tg_idx_save(tpath("rt_t.idx"), tr));
    tg_tensor *w = tg_idx_load(tpath("rt_t.idx"), 3);
    CHECK(w != NULL);
    if (w) {
        CHECK_SHAPE(w, 3, 4, 5);
        const uint8_t *wd = tg_data(w);
        CHECK(wd[1 * 20 + 2 * 5 + 4] == v[4 * 12 + 2 * 3 + 1]);
    }

    /* labels: 1-D, magic 0x00000801 */
    tg_tensor *l = tg_from_data(TG_UINT8, 1, (int64_t[]){7}, v);
    CHECK_OK(tg_idx_save(tpath("rt1.idx"), l));
    FILE *f = fopen(tpath("rt1.idx"), "rb");
    unsigned char h[8] = {0};
    CHECK(f && fread(h, 1, 8, f) == 8);
    if (f)
        fclose(f);
    CHECK(h[0] == 0 && h[1] == 0 && h[2] == 8 && h[3] == 1 && h[7] == 7);
    tg_tensor *l2 = tg_idx_load(tpath("rt1.idx"), 1);
    CHECK(l2 && tg_numel(l2) == 7 && !memcmp(tg_data(l2), v, 7));

    /* save errors */
    CHECK_FAILS(tg_idx_save(tpath("x.idx"), tg_zeros(TG_FLOAT32, 1, (int64_t[]){3})),
                TG_ERR_DTYPE, "uint8");
    CHECK_FAILS(tg_idx_save(tpath("x.idx"), tg_scalar(TG_UINT8, 1)), TG_ERR_DTYPE,
                "0 dims");
    CHECK_FAILS(tg_idx_save(tpath("x.idx"), tg_zeros(TG_UINT8, 2, (int64_t[]){0, 3})),
                TG_ERR_SHAPE, "dim 0");
    CHECK_FAILS(tg_idx_save("/nonexistent-dir/x.idx", l), TG_ERR_IO, "cannot create");
    CHECK_FAILS(tg_idx_save(NULL, l), TG_ERR_ARG, "NULL");
}

static void test_idx_malformed(void)
{
    const uint32_t d3[3] = {2, 3, 4};
    const char *p;

    CHECK_ERROR(tg_idx_load(tpath("absent.idx"), 3), TG_ERR_IO, "absent.idx");
    CHECK_ERROR(tg_idx_load(tmp_root, 3), TG_ERR_IO, "not a regular file");
    CHECK_ERROR(tg_idx_load(NULL, 3), TG_ERR_ARG, "NULL");
    CHECK_ERROR(tg_idx_load(tpath("absent.idx"), 9), TG_ERR_ARG, "expect_ndim");

    p = tpath("empty.idx");
    write_file(p, "", 0);
    CHECK_ERROR(tg_idx_load(p, 3), TG_ERR_IO, "empty.idx' is truncated");
    p = tpath("short.idx");
    write_file(p, "\0\0\x08", 3);
    CHECK_ERROR(tg_idx_load(p, 3), TG_ERR_IO, "truncated");

    /* wrong magic: labels where images are expected, other types, garbage */
    p = tpath("magic1.idx");
    write_idx(p, 0x00000801, 1, d3, 2);
    CHECK_ERROR(tg_idx_load(p, 3), TG_ERR_IO, "magic1.idx' has wrong magic 0x00000801, expected 0x00000803");
    p = tpath("magicf.idx");
    write_idx(p, 0x00000D03, 3, d3, 24 * 4);
    CHECK_ERROR(tg_idx_load(p, 3), TG_ERR_IO, "wrong magic 0x00000d03");
    p = tpath("magicg.idx");
    write_idx(p, 0x1f8b0800, 0, d3, 40);
    CHECK_ERROR(tg_idx_load(p, 0), TG_ERR_IO, "wrong magic 0x1f8b0800");
    CHECK_ERROR(tg_idx_load(p, 0), TG_ERR_IO, "gzip-compressed");
    p = tpath("magic0.idx");
    write_idx(p, 0x00000800, 0, d3, 4);
    CHECK_ERROR(tg_idx_load(p, 0), TG_ERR_IO, "wrong magic");
    p = tpath("magic9.idx");
    write_idx(p, 0x00000809, 0, d3, 64);
    CHECK_ERROR(tg_idx_load(p, 0), TG_ERR_IO, "wrong magic");

    /* header cut inside the dims */
    p = tpath("hdr.idx");
    write_idx(p, 0x00000803, 2, d3, 0);
    CHECK_ERROR(tg_idx_load(p, 3), TG_ERR_IO, "header of 3 dims needs 16");

    /* zero and huge dims */
    p = tpath("zero.idx");
    write_idx(p, 0x00000803, 3, (uint32_t[]){2, 0, 4}, 0);
    CHECK_ERROR(tg_idx_load(p, 3), TG_ERR_IO, "invalid dim 1 = 0");
    p = tpath("neg.idx");
    write_idx(p, 0x00000803, 3, (uint32_t[]){0xffffffffu, 28, 28}, 16);
    CHECK_ERROR(tg_idx_load(p, 3), TG_ERR_IO, "invalid dim 0 = 4294967295");
    p = tpath("huge.idx");
    write_idx(p, 0x00000803, 3, (uint32_t[]){0x7fffffff, 0x7fffffff, 0x7fffffff}, 16);
    CHECK_ERROR(tg_idx_load(p, 3), TG_ERR_IO, "dims [2147483647, 2147483647, 2147483647] say more than");

    /* data one byte short, one byte long */
    p = tpath("trunc.idx");
    write_idx(p, 0x00000803, 3, d3, 23);
    CHECK_ERROR(tg_idx_load(p, 3), TG_ERR_IO, "has 23 bytes after the header, its dims [2, 3, 4] say 24 (truncated");
    p = tpath("long.idx");
    write_idx(p, 0x00000803, 3, d3, 25);
    CHECK_ERROR(tg_idx_load(p, 3), TG_ERR_IO, "trailing garbage");
    p = tpath("ok.idx");
    write_idx(p, 0x00000803, 3, d3, 24);
    CHECK(tg_idx_load(p, 3) != NULL);
}

/* every truncation and many single-byte corruptions of a valid file load
 * or fail cleanly with TG_ERR_IO, never crash */
static void test_idx_fuzz(void)
{
    const char *p = tpath("fuzz.idx");
    size_t n = write_idx(tpath("fuzz_src.idx"), 0x00000803, 3,
                         (uint32_t[]){3, 2, 5}, 30);
    unsigned char *src = malloc(n);
    FILE *f = fopen(tpath("fuzz_src.idx"), "rb");
    CHECK(f && fread(src, 1, n, f) == n);
    if (f)
        fclose(f);
    int ok = 0, io = 0, other = 0;
    for (size_t len = 0; len <= n; len++) { /* every prefix */
        write_file(p, src, len);
        tg_clear_error();
        tg_tensor *t = tg_idx_load(p, 3);
        t ? ok++ : tg_last_status() == TG_ERR_IO ? io++ : other++;
    }
    CHECK(ok == 1 && io == (int)n && other == 0);
    for (size_t i = 0; i < 16; i++) /* corrupt each header byte */
        for (int bit = 0; bit < 8; bit++) {
            src[i] ^= (unsigned char)(1u << bit);
            write_file(p, src, n);
            tg_clear_error();
            tg_tensor *t = tg_idx_load(p, 0);
            if (!t)
                CHECK(tg_last_status() == TG_ERR_IO);
            src[i] ^= (unsigned char)(1u << bit);
        }
    free(src);
}

/* ---- MNIST dataset ------------------------------------------------------------ */
static void test_mnist_dataset(void)
{
    const char *dir = tpath("mnist_ok");
    mkdir(dir, 0755);
    write_mnist(dir, "train", 10, 28, 28, -1);
    write_mnist(dir, "t10k", 4, 28, 28, -1);
    tg_dataset *d = tg_mnist_dataset(dir, true);
    CHECK(d != NULL);
    if (!d)
        return;
    CHECK(tg_dataset_size(d) == 10);
    tg_tensor *x, *y;
    CHECK_OK(tg_dataset_get(d, (int64_t[]){7, 2, 7}, 3, &x, &y));
    CHECK(x && tg_dtype_of(x) == TG_FLOAT32 && tg_dtype_of(y) == TG_INT64);
    if (x) {
        CHECK_SHAPE(x, 3, 1, 28, 28);
        CHECK_SHAPE(y, 3);
        const float *xd = tg_data(x);
        const int64_t *yd = tg_data(y);
        bool exact = true;
        for (int j = 0; j < 784; j++) {
            int i = 2 * 784 + j; /* sample 2 is the batch's row 1 */
            int v = (i * 31 + i / 7) % 256;
            exact &= xd[784 + j] == mnist_norm(v);
        }
        CHECK(exact);
        CHECK(yd[0] == 1 && yd[1] == 6 && yd[2] == 1); /* (i*3) % 10 */
        CHECK(!memcmp(xd, xd + 2 * 784, 784 * sizeof(float)));
    }
    /* the normalisation: (0/255 - 0.1307) / 0.3081 and (255/255 - ...) */
    CHECK_NEAR(mnist_norm(0), -0.42421296, 1e-6);
    CHECK_NEAR(mnist_norm(255), 2.82148653, 1e-6);
    CHECK_NEAR(mnist_norm(128), (128.0 / 255 - 0.1307) / 0.3081, 1e-6);
    CHECK_FAILS(tg_dataset_get(d, (int64_t[]){10}, 1, &x, &y), TG_ERR_INDEX,
                "index 10 is out of range for 10");
    CHECK_FAILS(tg_dataset_get(d, (int64_t[]){-1}, 1, &x, &y), TG_ERR_INDEX, "-1");
    tg_dataset_free(d);

    d = tg_mnist_dataset(dir, false);
    CHECK(d && tg_dataset_size(d) == 4);
    tg_dataset_free(d);

    /* images of another size (3 x 5: not a multiple of the 16-wide chunks) */
    const char *odd = tpath("mnist_odd");
    mkdir(odd, 0755);
    write_mnist(odd, "train", 3, 3, 5, -1);
    d = tg_mnist_dataset(odd, true);
    CHECK(d && tg_dataset_get(d, (int64_t[]){2, 0}, 2, &x, &y) == TG_OK);
    if (d && x) {
        CHECK_SHAPE(x, 2, 1, 3, 5);
        const float *xd = tg_data(x);
        bool exact = true;
        for (int j = 0; j < 15; j++) {
            int i2 = 2 * 15 + j, i0 = j;
            exact &= xd[j] == mnist_norm((i2 * 31 + i2 / 7) % 256);
            exact &= xd[15 + j] == mnist_norm((i0 * 31 + i0 / 7) % 256);
        }
        CHECK(exact);
    }
    tg_dataset_free(d);

    /* broken datasets */
    const char *bad = tpath("mnist_bad");
    mkdir(bad, 0755);
    CHECK_ERROR(tg_mnist_dataset(bad, true), TG_ERR_IO,
                "train-images-idx3-ubyte' not found; fetch MNIST with `tg data mnist --dir");
    write_mnist(bad, "train", 5, 28, 28, 3);
    CHECK_ERROR(tg_mnist_dataset(bad, true), TG_ERR_IO, "label 10 at index 3");
    write_mnist(bad, "t10k", 5, 28, 28, -1);
    char path[512];
    snprintf(path, sizeof path, "%s/t10k-labels-idx1-ubyte", bad);
    CHECK_OK(tg_idx_save(path, tg_zeros(TG_UINT8, 1, (int64_t[]){4})));
    CHECK_ERROR(tg_mnist_dataset(bad, false), TG_ERR_IO, "has 5 images but");
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte", bad);
    CHECK_OK(tg_idx_save(path, tg_zeros(TG_UINT8, 1, (int64_t[]){4})));
    CHECK_ERROR(tg_mnist_dataset(bad, false), TG_ERR_IO, "expected 0x00000803");
    CHECK_ERROR(tg_mnist_dataset(NULL, false), TG_ERR_ARG, "NULL");
}

/* ---- the loader -------------------------------------------------------------- */
/* x[i] = (i, 2i, 3i) float32, y[i] = i int64 */
static tg_dataset *seq_dataset(int n)
{
    float *xv = malloc(sizeof(float) * 3 * (size_t)(n ? n : 1));
    int64_t *yv = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            xv[3 * i + k] = (float)(i * (k + 1));
        yv[i] = i;
    }
    tg_tensor *x = tg_from_data(TG_FLOAT32, 2, (int64_t[]){n, 3}, xv);
    tg_tensor *y = tg_from_data(TG_INT64, 1, (int64_t[]){n}, yv);
    free(xv);
    free(yv);
    return tg_dataset_from_tensors(x, y);
}

/* the labels of one epoch in order; returns the number of batches and
 * writes the batch sizes */
static int run_epoch(tg_loader *l, int64_t *labels, int64_t *sizes)
{
    int nb = 0, r;
    int64_t k = 0;
    tg_tensor *x, *y;
    while ((r = tg_loader_next(l, &x, &y)) == 1) {
        tg_scope_begin();
        const int64_t *yd = tg_data(y);
        const float *xd = tg_data(x);
        for (int64_t i = 0; i < tg_size(y, 0); i++) {
            labels[k++] = yd[i];
            if (xd[3 * i + 2] != 3.0f * (float)yd[i])
                tt_fail(__FILE__, __LINE__, "x row does not match its label");
        }
        sizes[nb++] = tg_size(y, 0);
        tg_scope_end();
    }
    CHECK(r == 0 && x == NULL && y == NULL);
    return nb;
}

static void test_loader_counts(void)
{
    tg_dataset *d = seq_dataset(10);
    for (int pf = 0; pf <= 3; pf += 3) {
        tg_loader_options o = tg_loader_defaults();
        o.batch_size = 3;
        o.prefetch = pf;
        tg_loader *l = tg_loader_new(d, &o);
        CHECK(tg_loader_num_batches(l) == 4);
        int64_t lab[16], sz[8];
        for (int e = 0; e < 2; e++) {
            CHECK(tg_loader_epoch(l) == (uint64_t)e);
            CHECK(run_epoch(l, lab, sz) == 4);
            CHECK(sz[0] == 3 && sz[1] == 3 && sz[2] == 3 && sz[3] == 1);
            for (int i = 0; i < 10; i++)
                CHECK(lab[i] == i); /* no shuffle: in order */
        }
        tg_loader_free(l);

        o.drop_last = true;
        l = tg_loader_new(d, &o);
        CHECK(tg_loader_num_batches(l) == 3);
        CHECK(run_epoch(l, lab, sz) == 3);
        CHECK(sz[2] == 3 && lab[8] == 8);
        tg_loader_free(l);

        o.batch_size = 11; /* bigger than the dataset */
        l = tg_loader_new(d, &o);
        CHECK(tg_loader_num_batches(l) == 0 && run_epoch(l, lab, sz) == 0);
        tg_loader_free(l);
        o.drop_last = false;
        l = tg_loader_new(d, &o);
        CHECK(run_epoch(l, lab, sz) == 1 && sz[0] == 10);
        tg_loader_free(l);
        o.batch_size = 5; /* exact multiple: drop_last changes nothing */
        l = tg_loader_new(d, &o);
        CHECK(run_epoch(l, lab, sz) == 2 && sz[1] == 5);
        tg_loader_free(l);
    }
    tg_dataset_free(d);

    d = seq_dataset(0); /* empty */
    tg_loader *l = tg_loader_new(d, NULL);
    int64_t lab[1], sz[1];
    CHECK(l && tg_loader_num_batches(l) == 0 && run_epoch(l, lab, sz) == 0);
    tg_loader_free(l);
    tg_dataset_free(d);
}

static bool is_perm(const int64_t *v, int n)
{
    bool seen[256] = {false};
    for (int i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] >= n || seen[v[i]])
            return false;
        seen[v[i]] = true;
    }
    return true;
}

static void test_shuffle(void)
{
    enum { N = 50 };
    tg_dataset *d = seq_dataset(N);
    tg_loader_options o = tg_loader_defaults();
    o.batch_size = 8;
    o.shuffle = true;
    o.seed = 1234;
    int64_t a[3][N], b[3][N], c[N], sz[8];
    tg_loader *l1 = tg_loader_new(d, &o), *l2 = tg_loader_new(d, &o);
    for (int e = 0; e < 3; e++) {
        run_epoch(l1, a[e], sz);
        run_epoch(l2, b[e], sz);
        CHECK(is_perm(a[e], N));
        CHECK(!memcmp(a[e], b[e], sizeof a[e])); /* same seed, same order */
    }
    CHECK(memcmp(a[0], a[1], sizeof a[0]) != 0); /* epochs differ */
    CHECK(memcmp(a[1], a[2], sizeof a[0]) != 0);
    bool in_order = true;
    for (int i = 0; i < N; i++)
        in_order &= a[0][i] == i;
    CHECK(!in_order);
    /* set_epoch replays an epoch's order (resuming a run) */
    tg_loader_set_epoch(l2, 1);
    run_epoch(l2, c, sz);
    CHECK(!memcmp(c, a[1], sizeof c));
    CHECK(tg_loader_epoch(l2) == 2);
    tg_loader_free(l1);
    tg_loader_free(l2);
    o.seed = 1235; /* another seed, another order */
    l1 = tg_loader_new(d, &o);
    run_epoch(l1, c, sz);
    CHECK(memcmp(c, a[0], sizeof c) != 0);
    tg_loader_free(l1);
    tg_dataset_free(d);
}

/* prefetch 0, 1, 2 and 5 give bit-identical batches on MNIST-shaped data */
static void test_prefetch_identical(void)
{
    const char *dir = tpath("mnist_pf");
    mkdir(dir, 0755);
    write_mnist(dir, "train", 37, 28, 28, -1);
    tg_dataset *d = tg_mnist_dataset(dir, true);
    CHECK(d != NULL);
    if (!d)
        return;
    const int pfs[4] = {0, 1, 2, 5};
    tg_loader *l[4];
    for (int k = 0; k < 4; k++) {
        tg_loader_options o = {.batch_size = 4, .shuffle = true, .seed = 7,
                               .drop_last = true, .prefetch = pfs[k]};
        l[k] = tg_loader_new(d, &o);
    }
    int batches = 0;
    bool same = true;
    for (int e = 0; e < 2; e++) {
        for (;;) {
            tg_scope_begin();
            tg_tensor *x[4], *y[4];
            int r[4];
            for (int k = 0; k < 4; k++)
                r[k] = tg_loader_next(l[k], &x[k], &y[k]);
            bool done = r[0] != 1;
            for (int k = 1; k < 4; k++) {
                same &= r[k] == r[0];
                if (!done && r[k] == 1) {
                    same &= !memcmp(tg_data(x[0]), tg_data(x[k]),
                                    (size_t)tg_numel(x[0]) * sizeof(float));
                    same &= !memcmp(tg_data(y[0]), tg_data(y[k]), 4 * sizeof(int64_t));
                }
            }
            tg_scope_end();
            if (done)
                break;
            batches++;
        }
    }
    CHECK(same);
    CHECK(batches == 2 * 9);
    for (int k = 0; k < 4; k++)
        tg_loader_free(l[k]);
    tg_dataset_free(d);
}

/* batches stay valid and unchanged while later ones are prepared and after
 * the loader is gone */
static void test_batches_outlive_loader(void)
{
    tg_dataset *d = seq_dataset(40);
    tg_loader_options o = {.batch_size = 4, .shuffle = true, .seed = 3, .prefetch = 3};
    tg_loader *l = tg_loader_new(d, &o);
    tg_tensor *xs[10], *ys[10];
    float first[12];
    for (int i = 0; i < 10; i++) {
        CHECK(tg_loader_next(l, &xs[i], &ys[i]) == 1);
        if (i == 0)
            memcpy(first, tg_data(xs[0]), sizeof first);
    }
    tg_loader_free(l);
    tg_dataset_free(d);
    CHECK(!memcmp(first, tg_data(xs[0]), sizeof first));
    bool seen[40] = {false}, ok = true;
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 4; j++) {
            int64_t v = ((const int64_t *)tg_data(ys[i]))[j];
            ok &= v >= 0 && v < 40 && !seen[v] &&
                  ((const float *)tg_data(xs[i]))[3 * j + 1] == 2.0f * (float)v;
            if (v >= 0 && v < 40)
                seen[v] = true;
        }
    CHECK(ok);
}

/* stopping mid-epoch: the worker is parked on a full ring, or never
 * started; valgrind/ASan see no leak */
static void test_shutdown_mid_epoch(void)
{
    tg_dataset *d = seq_dataset(100);
    tg_loader_options o = {.batch_size = 2, .shuffle = true, .seed = 1, .prefetch = 4};
    tg_loader *l = tg_loader_new(d, &o);
    tg_tensor *x, *y;
    CHECK(tg_loader_next(l, &x, &y) == 1);
    usleep(2000); /* let the worker fill the ring */
    tg_loader_free(l);

    l = tg_loader_new(d, &o); /* never started */
    tg_loader_free(l);

    /* abandon an epoch, then run the next one to the end */
    l = tg_loader_new(d, &o);
    CHECK(tg_loader_next(l, &x, &y) == 1);
    CHECK(tg_loader_next(l, &x, &y) == 1);
    tg_loader_set_epoch(l, 5);
    int64_t lab[100], sz[50];
    CHECK(run_epoch(l, lab, sz) == 50);
    CHECK(is_perm(lab, 100));
    CHECK(tg_loader_epoch(l) == 6);
    tg_loader_free(l);
    tg_loader_free(NULL);
    tg_dataset_free(d);
}

/* a dataset of our own that fails on sample 13 and builds its batches with
 * public ops (so they would land in a scope if the loader let them) */
static int64_t cust_size(void *self) { (void)self; return 20; }
static tg_status cust_get(void *self, const int64_t *idx, int64_t n,
                          tg_tensor **x, tg_tensor **y)
{
    int mode = *(int *)self;
    for (int64_t i = 0; i < n; i++)
        if (idx[i] == 13 && mode == 1)
            return tg__error(TG_ERR_IO, "custom: boom at sample 13");
    *x = tg_full(TG_FLOAT32, 2, (int64_t[]){n, 2}, (double)idx[0]);
    *y = tg_zeros(TG_INT64, 1, (int64_t[]){mode == 2 ? n + 1 : n});
    return TG_OK;
}

static void test_custom_dataset_and_errors(void)
{
    int mode = 0;
    tg_dataset_impl impl = {cust_size, cust_get, NULL};
    tg_dataset *d = tg_dataset_new(&impl, &mode);
    CHECK(d && tg_dataset_size(d) == 20);
    for (int pf = 0; pf <= 2; pf += 2) {
        tg_loader_options o = {.batch_size = 3, .prefetch = pf};
        tg_loader *l = tg_loader_new(d, &o);
        tg_tensor *x, *y;
        tg_scope_begin(); /* inside a scope: no double ownership */
        mode = 0;
        int nb = 0, r;
        while ((r = tg_loader_next(l, &x, &y)) == 1)
            nb++;
        CHECK(r == 0 && nb == 7);
        tg_scope_end();

        mode = 1; /* batch 4 holds sample 13 */
        nb = 0;
        while ((r = tg_loader_next(l, &x, &y)) == 1)
            nb++;
        CHECK(r == -1 && nb == 4 && x == NULL);
        CHECK(tg_last_status() == TG_ERR_IO);
        CHECK(strstr(tg_last_error(), "boom at sample 13") != NULL);
        mode = 2; /* wrong number of rows */
        tg_loader_set_epoch(l, 0);
        r = tg_loader_next(l, &x, &y);
        CHECK(r == -1 && tg_last_status() == TG_ERR_SHAPE);
        CHECK(strstr(tg_last_error(), "must return x and y with 3 rows") != NULL);
        tg_loader_free(l);
    }
    mode = 0;

    /* argument errors */
    tg_loader_options o = tg_loader_defaults();
    o.batch_size = 0;
    CHECK_ERROR(tg_loader_new(d, &o), TG_ERR_ARG, "batch_size is 0");
    o = tg_loader_defaults();
    o.prefetch = -1;
    CHECK_ERROR(tg_loader_new(d, &o), TG_ERR_ARG, "prefetch is -1");
    o.prefetch = 65;
    CHECK_ERROR(tg_loader_new(d, &o), TG_ERR_ARG, "prefetch is 65");
    CHECK_ERROR(tg_loader_new(NULL, NULL), TG_ERR_ARG, "dataset is NULL");
    CHECK_ERROR(tg_dataset_new(&(tg_dataset_impl){NULL, cust_get, NULL}, NULL),
                TG_ERR_ARG, "size");
    tg_tensor *x, *y;
    tg_clear_error();
    CHECK(tg_loader_next(NULL, &x, &y) == -1 && tg_last_status() == TG_ERR_ARG);
    CHECK_ERROR(tg_dataset_from_tensors(tg_zeros(TG_FLOAT32, 1, (int64_t[]){3}),
                                        tg_zeros(TG_INT64, 1, (int64_t[]){4})),
                TG_ERR_SHAPE, "[3]");
    tg_dataset_free(d);
}

/* ---- fetching ------------------------------------------------------------------ */
static void fake_file(const char *path, size_t n, int salt, char hex[65])
{
    unsigned char *b = malloc(n);
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 13 + (size_t)salt);
    write_file(path, b, n);
    if (hex)
        tg__sha256_hex(b, n, hex);
    free(b);
}

static bool have_tools(void)
{
    return system("command -v curl >/dev/null 2>&1 && command -v gzip >/dev/null 2>&1") == 0;
}

static void collect_log(void *user, const char *line)
{
    int *n = user;
    (*n)++;
    (void)line;
}

static void test_fetch_logic(void)
{
    char ha[65], hb[65], why[256], path[800];
    const char *dir = tpath("fetch");
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/a.bin", dir);
    fake_file(path, 100, 1, ha);
    snprintf(path, sizeof path, "%s/b.bin", dir);
    fake_file(path, 37, 2, hb);
    tg__fetch_file files[2] = {{"a.bin", 100, ha}, {"b.bin", 37, hb}};
    int lines = 0;
    tg__fetch_plan plan = {.what = "FAKE", .files = files, .n_files = 2,
                           .connect_timeout_s = 2, .log = collect_log,
                           .log_user = &lines};

    /* present and valid: nothing to do, no sources needed */
    CHECK_OK(tg__fetch_ensure(dir, &plan));
    CHECK(tg__fetch_check(path, &files[1], why, sizeof why));

    /* same size, other bytes: a hash mismatch; no source: a clear error
     * that leaves the file alone */
    fake_file(path, 37, 3, NULL);
    CHECK(!tg__fetch_check(path, &files[1], why, sizeof why));
    CHECK(strstr(why, "SHA-256") != NULL);
    CHECK(tg__fetch_ensure(dir, &plan) == TG_ERR_IO);
    CHECK(strstr(tg_last_error(), "could not get FAKE into") != NULL);
    CHECK(strstr(tg_last_error(), "missing or invalid: b.bin)") != NULL);
    CHECK(strstr(tg_last_error(), "Place the raw, gunzipped files a.bin, b.bin in") != NULL);
    CHECK(strstr(tg_last_error(), "install npm") != NULL);
    tg_clear_error();
    CHECK(tg__fetch_check(path, &files[0], why, sizeof why) == false);
    fake_file(path, 36, 2, NULL);
    CHECK(!tg__fetch_check(path, &files[1], why, sizeof why));
    CHECK(strstr(why, "36 bytes, expected 37") != NULL);
    remove(path);
    CHECK(!tg__fetch_check(path, &files[1], why, sizeof why) && !strcmp(why, "missing"));
    CHECK(count_entries(dir, ".tg-fetch") == 0);
    CHECK(lines > 0);

    if (!have_tools()) {
        printf("  (curl or gzip missing: mirror tests skipped)\n");
        return;
    }
    /* a file:// mirror serving gzipped copies: b is fetched, verified and
     * renamed into place; no temporary files remain */
    const char *mirror = tpath("mirror");
    mkdir(mirror, 0755);
    char mp[512], cmd[1200], base[600];
    snprintf(mp, sizeof mp, "%s/b.bin", mirror);
    fake_file(mp, 37, 2, NULL);
    snprintf(cmd, sizeof cmd, "gzip -f '%s'", mp);
    CHECK(system(cmd) == 0);
    snprintf(base, sizeof base, "file://%s/", mirror);
    const char *bad_mirror = "file:///nonexistent-tg-mirror/";
    const char *mirrors[2] = {bad_mirror, base};
    plan.mirrors = mirrors;
    plan.n_mirrors = 2;
    CHECK_OK(tg__fetch_ensure(dir, &plan));
    CHECK(tg__fetch_check(path, &files[1], why, sizeof why));
    CHECK(count_entries(dir, ".tg-fetch") == 0);

    /* into a directory that does not exist yet (created) */
    char nested[700];
    snprintf(nested, sizeof nested, "%s/new/sub", dir);
    tg__fetch_file only_b[1] = {{"b.bin", 37, hb}};
    plan.files = only_b;
    plan.n_files = 1;
    CHECK_OK(tg__fetch_ensure(nested, &plan));
    snprintf(path, sizeof path, "%s/b.bin", nested);
    CHECK(tg__fetch_check(path, &only_b[0], why, sizeof why));

    /* a mirror serving the wrong bytes: rejected, nothing installed */
    fake_file(mp, 37, 9, NULL);
    snprintf(cmd, sizeof cmd, "gzip -f '%s'", mp);
    CHECK(system(cmd) == 0);
    remove(path);
    CHECK(tg__fetch_ensure(nested, &plan) == TG_ERR_IO);
    CHECK(strstr(tg_last_error(), "SHA-256") != NULL);
    CHECK(strstr(tg_last_error(), "nonexistent-tg-mirror") != NULL);
    tg_clear_error();
    CHECK(access(path, F_OK) != 0);
    CHECK(count_entries(nested, ".tg-fetch") == 0);
}

/* the npm route with a fake `npm` on PATH that "packs" local tarballs:
 * the wanted members are extracted, verified and installed; a package
 * whose file is a symlink is refused */
static void test_fetch_npm(void)
{
    if (system("command -v tar >/dev/null 2>&1 && command -v gzip >/dev/null 2>&1") != 0) {
        printf("  (tar or gzip missing: npm test skipped)\n");
        return;
    }
    char cmd[2048], path[700], ha[65], hb[65], why[256];
    const char *src = tpath("npmsrc"), *bin = tpath("fakebin"), *dir = tpath("npmdest");
    mkdir(src, 0755);
    mkdir(bin, 0755);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/package/data' '%s/link/package/data'", src, src);
    CHECK(system(cmd) == 0);
    snprintf(path, sizeof path, "%s/package/data/a.bin", src);
    fake_file(path, 70, 4, ha);
    snprintf(path, sizeof path, "%s/package/data/b.bin", src);
    fake_file(path, 1000, 5, hb);
    snprintf(path, sizeof path, "%s/package/extra.js", src);
    fake_file(path, 10, 6, NULL);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && tar -czf fake-pkg-1.0.0.tgz package && "
             "cp package/data/a.bin link/package/data/ && "
             "ln -s '%s/package/data/b.bin' link/package/data/b.bin && "
             "cd link && tar -czf ../link-pkg-1.0.0.tgz package", src, src);
    CHECK(system(cmd) == 0);
    snprintf(path, sizeof path, "%s/npm", bin);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "#!/bin/sh\n[ \"$1\" = pack ] || exit 2\n"
               "[ -f \"%s/$2-1.0.0.tgz\" ] || { echo \"npm ERR! 404 $2\" >&2; exit 1; }\n"
               "cp \"%s/$2-1.0.0.tgz\" . && echo \"$2-1.0.0.tgz\"\n", src, src);
    fclose(f);
    chmod(path, 0755);
    const char *old = getenv("PATH");
    char *saved = strdup(old ? old : "/usr/bin:/bin"), newpath[4096];
    snprintf(newpath, sizeof newpath, "%s:%s", bin, saved);
    setenv("PATH", newpath, 1);

    tg__fetch_file files[2] = {{"a.bin", 70, ha}, {"b.bin", 1000, hb}};
    tg__fetch_plan plan = {.what = "FAKE", .files = files, .n_files = 2,
                           .npm_package = "fake-pkg", .npm_dir = "package/data",
                           .connect_timeout_s = 2};
    CHECK_OK(tg__fetch_ensure(dir, &plan));
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        CHECK(tg__fetch_check(path, &files[i], why, sizeof why));
    }
    snprintf(path, sizeof path, "%s/extra.js", dir);
    CHECK(access(path, F_OK) != 0);
    CHECK(count_entries(dir, ".tg-fetch") == 0);

    /* a package that does not exist */
    const char *dir2 = tpath("npmdest2");
    plan.npm_package = "missing-pkg";
    CHECK(tg__fetch_ensure(dir2, &plan) == TG_ERR_IO);
    CHECK(strstr(tg_last_error(), "npm pack missing-pkg (exit 1: npm ERR! 404") != NULL);
    tg_clear_error();

    /* b.bin is a symlink in the archive: a.bin is taken, b.bin refused */
    plan.npm_package = "link-pkg";
    CHECK(tg__fetch_ensure(dir2, &plan) == TG_ERR_IO);
    CHECK(strstr(tg_last_error(), "missing or invalid: b.bin)") != NULL);
    CHECK(strstr(tg_last_error(), "not a regular file") != NULL);
    tg_clear_error();
    snprintf(path, sizeof path, "%s/a.bin", dir2);
    CHECK(tg__fetch_check(path, &files[0], why, sizeof why));
    snprintf(path, sizeof path, "%s/b.bin", dir2);
    CHECK(access(path, F_OK) != 0);
    CHECK(count_entries(dir2, ".tg-fetch") == 0);

    setenv("PATH", saved, 1);
    free(saved);
}

/* the tg binary sits next to this test in the build directory */
static bool tg_binary(char *out, size_t len)
{
    char self[400];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(out, len, "%s/tg", self);
    return access(out, X_OK) == 0;
}

static void test_cli(void)
{
    char tg[512], cmd[2048];
    if (!tg_binary(tg, sizeof tg)) {
        printf("  (tg binary not found: CLI tests skipped)\n");
        return;
    }
    snprintf(cmd, sizeof cmd, "'%s' data idx '%s' >/dev/null", tg, tpath("ok.idx"));
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "'%s' data idx '%s' 2>/dev/null", tg, tpath("long.idx"));
    CHECK(WEXITSTATUS(system(cmd)) == 1);
    /* no curl, wget or npm on PATH: a clear message and exit status 1 */
    snprintf(cmd, sizeof cmd, "PATH=/nonexistent '%s' data mnist --dir '%s' "
             "2>'%s' >/dev/null", tg, tpath("cli_empty"), tpath("cli_err.txt"));
    CHECK(WEXITSTATUS(system(cmd)) == 1);
    FILE *f = fopen(tpath("cli_err.txt"), "r");
    char all[8192] = "";
    size_t n = f ? fread(all, 1, sizeof all - 1, f) : 0;
    all[n] = '\0';
    if (f)
        fclose(f);
    CHECK(strstr(all, "neither curl nor wget") != NULL);
    CHECK(strstr(all, "npm is not installed") != NULL);
    CHECK(strstr(all, "Place the raw, gunzipped files train-images-idx3-ubyte") != NULL);
    CHECK(count_entries(tpath("cli_empty"), ".tg-fetch") == 0);

    const char *real = getenv("TG_TEST_MNIST_DIR");
    if (real) { /* present and valid: nothing fetched */
        snprintf(cmd, sizeof cmd, "PATH=/nonexistent '%s' data mnist --quiet "
                 "--dir '%s' >/dev/null", tg, real);
        CHECK(system(cmd) == 0);
    }
}

/* the real files, only when asked for */
static void test_real_mnist(void)
{
    const char *dir = getenv("TG_TEST_MNIST_DIR");
    if (dir) {
        CHECK_OK(tg_mnist_ensure(dir, NULL, NULL));
        tg_dataset *tr = tg_mnist_dataset(dir, true), *te = tg_mnist_dataset(dir, false);
        CHECK(tr && te && tg_dataset_size(tr) == 60000 && tg_dataset_size(te) == 10000);
        tg_tensor *x, *y;
        CHECK_OK(tg_dataset_get(tr, (int64_t[]){0}, 1, &x, &y));
        CHECK(y && tg_item(y) == 5); /* the first training digit is a 5 */
        CHECK_OK(tg_dataset_get(te, (int64_t[]){0}, 1, &x, &y));
        CHECK(y && tg_item(y) == 7);
        tg_dataset_free(tr);
        tg_dataset_free(te);
    }
    if (getenv("TG_TEST_NETWORK")) { /* a full fetch into a fresh dir */
        CHECK_OK(tg_mnist_ensure(tpath("net_mnist"), NULL, NULL));
        tg_dataset *tr = tg_mnist_dataset(tpath("net_mnist"), true);
        CHECK(tr && tg_dataset_size(tr) == 60000);
        tg_dataset_free(tr);
    }
}

int main(void)
{
    snprintf(tmp_root, sizeof tmp_root, "/tmp/tg_test_data_XXXXXX");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_sha256_vectors);
    RUN(test_idx_roundtrip);
    RUN(test_idx_malformed);
    RUN(test_idx_fuzz);
    RUN(test_mnist_dataset);
    RUN(test_loader_counts);
    RUN(test_shuffle);
    RUN(test_prefetch_identical);
    RUN(test_batches_outlive_loader);
    RUN(test_shutdown_mid_epoch);
    RUN(test_custom_dataset_and_errors);
    RUN(test_fetch_logic);
    RUN(test_fetch_npm);
    RUN(test_cli);
    RUN(test_real_mnist);
    nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tt_finish();
}
