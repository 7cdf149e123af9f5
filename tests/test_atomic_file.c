/* Atomic file writes shared by checkpoints, ONNX export and tg_write_file
 * (src/io/atomic_file.c): the new file's permissions come from the umask,
 * stale temporaries of dead writers are removed on the next save to the
 * same path (and nothing else is), failures leave no temporary behind. */
#include "harness.h"
#include "io/atomic_file.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static const char *path_in(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
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

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 0777) : 0;
}

/* a pid that ran and has exited (and been reaped) */
static long dead_pid(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return (long)p;
}

static tg_module *small_model(void)
{
    tg_generator *g = tg_generator_new(1);
    tg_module *m = tg_nn_linear(3, 2, true, g);
    tg_generator_free(g);
    return m;
}

static void test_permissions_follow_the_umask(void)
{
    tg_tensor *t = tg_ones(TG_FLOAT32, 1, (int64_t[]){4});
    const char *nm[1] = {"w"};
    tg_module *m = small_model();
    mode_t old = umask(022);
    CHECK_OK(tg_safetensors_save(path_in("a.st"), 1, nm, &t, 0, NULL));
    CHECK_OK(tg_onnx_export_module(m, 2, (int64_t[]){1, 3}, path_in("a.onnx")));
    CHECK(mode_of(path_in("a.st")) == 0644);
    CHECK(mode_of(path_in("a.onnx")) == 0644);
    umask(027);
    CHECK_OK(tg_safetensors_save(path_in("b.st"), 1, nm, &t, 0, NULL));
    CHECK_OK(tg_onnx_export_module(m, 2, (int64_t[]){1, 3}, path_in("b.onnx")));
    CHECK(mode_of(path_in("b.st")) == 0640);
    CHECK(mode_of(path_in("b.onnx")) == 0640);
    umask(old);
    CHECK(count_files() == 4);
    for (const char *const *n = (const char *const[]){"a.st", "a.onnx", "b.st", "b.onnx", NULL};
         *n; n++)
        unlink(path_in(*n));
    tg_module_free(m);
}

static void test_stale_temporaries_are_removed(void)
{
    char name[128];
    long dead = dead_pid();
    /* a dead writer's leftovers of x.st (two), and files that must stay: a
     * live process's temporary, other targets', names not of our making */
    const char *gone[2], *kept[5];
    snprintf(name, sizeof name, "x.st.tmp.%ld.0", dead);
    gone[0] = strdup(path_in(name));
    snprintf(name, sizeof name, "x.st.tmp.%ld.17", dead);
    gone[1] = strdup(path_in(name));
    snprintf(name, sizeof name, "x.st.tmp.%ld.0", (long)getppid());
    kept[0] = strdup(path_in(name));
    snprintf(name, sizeof name, "y.st.tmp.%ld.0", dead);
    kept[1] = strdup(path_in(name));
    kept[2] = strdup(path_in("x.st.tmp.abc"));
    snprintf(name, sizeof name, "x.st.tmp.%ld.0.bak", dead);
    kept[3] = strdup(path_in(name));
    snprintf(name, sizeof name, "xx.st.tmp.%ld.0", dead);
    kept[4] = strdup(path_in(name));
    for (int i = 0; i < 2; i++)
        touch(gone[i]);
    for (int i = 0; i < 5; i++)
        touch(kept[i]);
    tg_tensor *t = tg_ones(TG_FLOAT32, 1, (int64_t[]){4});
    const char *nm[1] = {"w"};
    CHECK_OK(tg_safetensors_save(path_in("x.st"), 1, nm, &t, 0, NULL));
    for (int i = 0; i < 2; i++)
        CHECK(!exists(gone[i]));
    for (int i = 0; i < 5; i++)
        CHECK(exists(kept[i]));
    CHECK(count_files() == 6);
    /* ONNX export cleans its own path's leftovers the same way */
    snprintf(name, sizeof name, "m.onnx.tmp.%ld.3", dead);
    const char *onnx_left = strdup(path_in(name));
    touch(onnx_left);
    tg_module *m = small_model();
    CHECK_OK(tg_onnx_export_module(m, 2, (int64_t[]){1, 3}, path_in("m.onnx")));
    CHECK(!exists(onnx_left));
    tg_module_free(m);
    unlink(path_in("x.st"));
    unlink(path_in("m.onnx"));
    for (int i = 0; i < 5; i++) {
        unlink(kept[i]);
        free((void *)kept[i]);
    }
    for (int i = 0; i < 2; i++)
        free((void *)gone[i]);
    free((void *)onnx_left);
    CHECK(count_files() == 0);
}

static void test_failures_leave_nothing(void)
{
    tg__atomic_file af;
    CHECK_FAILS(tg__atomic_begin(&af, NULL, "t"), TG_ERR_ARG, "NULL or empty");
    CHECK_FAILS(tg__atomic_begin(&af, "", "t"), TG_ERR_ARG, "NULL or empty");
    CHECK_FAILS(tg__atomic_begin(&af, path_in("no/such/f"), "t"), TG_ERR_IO, "temporary file");
    /* the writer gives up: no file, no temporary */
    CHECK_OK(tg__atomic_begin(&af, path_in("f"), "t"));
    fputs("half", af.f);
    CHECK_FAILS(tg__atomic_end(&af, false, 28 /* ENOSPC */, "t"), TG_ERR_IO, "unchanged");
    CHECK(count_files() == 0);
    /* the rename fails (a directory is in the way): it stays, nothing else */
    CHECK(mkdir(path_in("d"), 0755) == 0);
    CHECK_OK(tg__atomic_begin(&af, path_in("d"), "t"));
    fputs("data", af.f);
    CHECK_FAILS(tg__atomic_end(&af, true, 0, "t"), TG_ERR_IO, "cannot write");
    CHECK(count_files() == 1);
    rmdir(path_in("d"));
    /* success: exactly the file */
    CHECK_OK(tg__atomic_begin(&af, path_in("f"), "t"));
    fputs("data", af.f);
    CHECK_OK(tg__atomic_end(&af, true, 0, "t"));
    CHECK(count_files() == 1 && exists(path_in("f")));
    unlink(path_in("f"));
}

/* the public form (tg/io.h) front ends write their own formats with */
static void test_public_write_file(void)
{
    CHECK_OK(tg_write_file(path_in("w"), "first", 5));
    CHECK_OK(tg_write_file(path_in("w"), "2nd", 3));
    char buf[8] = {0};
    FILE *f = fopen(path_in("w"), "rb");
    CHECK(f && fread(buf, 1, sizeof buf, f) == 3 && memcmp(buf, "2nd", 3) == 0);
    if (f)
        fclose(f);
    CHECK_OK(tg_write_file(path_in("empty"), NULL, 0));
    CHECK(exists(path_in("empty")));
    CHECK_FAILS(tg_write_file(NULL, "x", 1), TG_ERR_ARG, "path is NULL");
    CHECK_FAILS(tg_write_file(path_in("w"), NULL, 1), TG_ERR_ARG, "data is NULL");
    CHECK_FAILS(tg_write_file(path_in("no/such/w"), "x", 1), TG_ERR_IO, "temporary file");
    CHECK(count_files() == 2);
    unlink(path_in("w"));
    unlink(path_in("empty"));
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/tg_atomic_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_permissions_follow_the_umask);
    RUN(test_stale_temporaries_are_removed);
    RUN(test_failures_leave_nothing);
    RUN(test_public_write_file);
    rmdir(dir);
    return tt_finish();
}
