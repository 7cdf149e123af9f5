/* Every writer of a file named by the user replaces it atomically: when the
 * write fails half way (here: the file size limit, RLIMIT_FSIZE, makes
 * write() fail with EFBIG after a few bytes, as a full disk would), the
 * call fails with TG_ERR_IO and the file that was there keeps its old
 * content, with no temporary left beside it; a FIFO or device in the way
 * is refused, a symbolic link followed. Covers the DOT writers of
 * graphs and partitioned sessions, the Chrome trace and MNIST's idx files
 * (safetensors, ONNX and the explorer page: tests/test_atomic_file.c). */
#include "harness.h"
#include "tg/tg.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static const char OLD[] = "old content, kept whole";

static const char *path_in(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

static int count_files(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void write_old(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(OLD, f);
        fclose(f);
    }
}

static bool has_old(const char *path)
{
    char buf[128] = {0};
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    return n == strlen(OLD) && strcmp(buf, OLD) == 0;
}

/* Files may grow to 16 bytes only until the returned limit is restored. */
static struct rlimit limit_file_size(void)
{
    struct rlimit old, small;
    getrlimit(RLIMIT_FSIZE, &old);
    small = old;
    small.rlim_cur = 16;
    setrlimit(RLIMIT_FSIZE, &small);
    return old;
}

/* Runs the writer twice into `name`: with the size limit it must fail and
 * leave the old file as it was (and nothing else); without, it must
 * succeed. */
#define CHECK_WRITER_IS_ATOMIC(name, call)                                  \
    do {                                                                    \
        const char *p_ = path_in(name);                                     \
        write_old(p_);                                                      \
        struct rlimit saved_ = limit_file_size();                           \
        tg_status st_ = (call);                                             \
        setrlimit(RLIMIT_FSIZE, &saved_);                                   \
        CHECK(st_ == TG_ERR_IO);                                            \
        CHECK(has_old(path_in(name)));                                      \
        CHECK(count_files() == 1);                                          \
        CHECK_OK(call);                                                     \
        CHECK(!has_old(path_in(name)));                                     \
        CHECK(count_files() == 1);                                          \
        unlink(path_in(name));                                              \
    } while (0)

static void test_graph_to_dot(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("g");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){4});
    tg_graph_begin(g);
    tg_exp(tg_neg(x));
    tg_graph_end();
    CHECK_WRITER_IS_ATOMIC("g.dot", tg_graph_to_dot(g, p_));
    tg_graph_free(g);
    tg_scope_end();
}

static void test_session_writers(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("parts");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){8});
    tg_graph_begin(g);
    tg_device_scope_begin("cpu:0");
    tg_tensor *a = tg_exp(x);
    tg_device_scope_end();
    tg_device_scope_begin("cpu:1");
    tg_tensor *b = tg_neg(a);
    tg_device_scope_end();
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_ones(TG_FLOAT32, 1, (int64_t[]){8}), *r;
    CHECK_WRITER_IS_ATOMIC("parts.dot",
                           tg_session_partitions_to_dot(s, 1, &x, 1, &b, 0, NULL, p_));
    /* the trace: each try needs a trace begun and a run recorded */
    CHECK_WRITER_IS_ATOMIC("trace.json",
                           (tg_session_trace_begin(s) == TG_OK &&
                                    tg_session_run(s, 1, &x, &xv, 1, &b, &r, 0, NULL) == TG_OK
                                ? tg_session_trace_end(s, p_)
                                : TG_ERR_ARG));
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

static void test_idx_save(void)
{
    tg_scope_begin();
    tg_tensor *t = tg_full(TG_UINT8, 2, (int64_t[]){10, 10}, 7.0);
    CHECK_WRITER_IS_ATOMIC("images.idx", tg_idx_save(p_, t));
    tg_scope_end();
}

/* Saving onto a FIFO (or a device such as /dev/null) fails and leaves it
 * what it was: renaming the new file over it would replace the node. */
static void test_a_fifo_is_not_replaced(void)
{
    const char *p = path_in("fifo");
    CHECK(mkfifo(p, 0600) == 0);
    tg_tensor *t = tg_ones(TG_FLOAT32, 1, (int64_t[]){4});
    const char *nm[1] = {"w"};
    CHECK_FAILS(tg_safetensors_save(p, 1, nm, &t, 0, NULL), TG_ERR_IO, "not a regular file");
    struct stat st;
    CHECK(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(count_files() == 1);
    unlink(p);
}

/* A symbolic link is followed: the file it names gets the new content and
 * the link stays a link. */
static void test_a_link_is_followed(void)
{
    char target[256];
    snprintf(target, sizeof target, "%s", path_in("target.idx"));
    write_old(target);
    CHECK(symlink("target.idx", path_in("link.idx")) == 0);
    tg_scope_begin();
    tg_tensor *t = tg_full(TG_UINT8, 1, (int64_t[]){40}, 3.0);
    CHECK_OK(tg_idx_save(path_in("link.idx"), t));
    tg_scope_end();
    struct stat st;
    CHECK(lstat(path_in("link.idx"), &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(stat(target, &st) == 0 && st.st_size == 4 + 4 + 40);
    CHECK(count_files() == 2);
    unlink(path_in("link.idx"));
    unlink(target);
}

int main(void)
{
    signal(SIGXFSZ, SIG_IGN); /* past the limit write() fails with EFBIG */
    snprintf(dir, sizeof dir, "/tmp/tg_writers_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_graph_to_dot);
    RUN(test_session_writers);
    RUN(test_idx_save);
    RUN(test_a_fifo_is_not_replaced);
    RUN(test_a_link_is_followed);
    rmdir(dir);
    return tt_finish();
}
