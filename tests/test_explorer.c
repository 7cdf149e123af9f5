/* The graph explorer page (tg_graph_to_html): its embedded data is valid
 * JSON with a graph per optimization level, pass records and the memory
 * plan; hostile names (a graph, a title, a profile's spans named
 * "</script><script>...") cannot end the data element; bad arguments and
 * bad profiles fail with messages naming them and leave no file; and,
 * where Chromium is installed, the page runs its self-test in it without
 * errors (skipped with status 77 and the reason otherwise, after the
 * checks that need no browser). */
#include "harness.h"
#include "io/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char hostile[] = "</script><script>alert(1)</script>\"'&<!--";
static char dir[] = "/tmp/tg-explorer-XXXXXX";

static char *path_in(const char *name)
{
    static char buf[32][512];
    static int k;
    char *p = buf[k++ % 32];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* the page's embedded data, parsed (NULL when it is not JSON) */
static tg_json *page_data(const char *page)
{
    const char *open = "<script type=\"application/json\" id=\"tg-data\">";
    const char *a = page ? strstr(page, open) : NULL;
    const char *b = a ? strstr(a, "</script>") : NULL;
    if (!b)
        return NULL;
    a += strlen(open);
    char err[200];
    tg_json *j = tg_json_parse(a, (size_t)(b - a), err, sizeof err);
    if (!j)
        fprintf(stderr, "page data: %s\n", err);
    return j;
}

/* y = relu(x * 2 + 1) summed, x: [rows, 3] (rows -1: unknown) */
static tg_graph *small_graph(const char *name, int64_t rows, tg_tensor **x)
{
    tg_graph *g = tg_graph_new(name);
    tg_graph_begin(g);
    *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){rows, 3});
    tg_tensor *y = tg_sum(tg_relu(tg_add_scalar(tg_mul_scalar(*x, 2), 1)), 0, NULL, false);
    tg_graph_set_name(y, "total");
    tg_graph_end();
    return g;
}

static const tg_json *level(const tg_json *data, int i)
{
    const tg_json *ls = tg_json_get(data, "levels");
    return ls && ls->type == TG_JSON_ARRAY && i < ls->n ? &ls->items[i] : NULL;
}

static int node_count(const tg_json *lvl)
{
    const tg_json *g = lvl ? tg_json_get(lvl, "graph") : NULL;
    const tg_json *nodes = g ? tg_json_get(g, "nodes") : NULL;
    return nodes && nodes->type == TG_JSON_ARRAY ? nodes->n : -1;
}

static void test_page_data(void)
{
    tg_scope_begin();
    tg_tensor *x;
    tg_graph *g = small_graph("small", 4, &x);
    const char *out = path_in("small.html");
    CHECK_OK(tg_graph_to_html(g, out, &(tg_html_options){.level = 1}));
    char *page = slurp(out);
    tg_json *data = page_data(page);
    CHECK(data != NULL);
    CHECK(page && strstr(page, "<!DOCTYPE html>") == page);
    CHECK(page && !strstr(page, "<!--@")); /* every template marker replaced */
    CHECK(page && !strstr(page, "src=\"http") && !strstr(page, "href=\"http"));
    for (int i = 0; data && i < 3; i++) {
        const tg_json *l = level(data, i), *err = l ? tg_json_get(l, "error") : NULL;
        CHECK(l && !err && tg_json_get(l, "passes") && tg_json_get(l, "memory"));
        if (err)
            fprintf(stderr, "level %d: %s\n", i, err->str);
    }
    CHECK(node_count(level(data, 0)) == tg_graph_num_nodes(g));
    /* level 1 folds and merges the constant arithmetic: fewer nodes */
    CHECK(node_count(level(data, 1)) > 0 && node_count(level(data, 1)) <= node_count(level(data, 0)));
    const tg_json *init = data ? tg_json_get(data, "initial_level") : NULL;
    CHECK(init && init->num == 1);
    tg_json_free(data);
    free(page);
    tg_graph_free(g);
    tg_scope_end();
}

static void test_hostile_names(void)
{
    tg_scope_begin();
    tg_tensor *x;
    tg_graph *g = small_graph(hostile, 4, &x);
    char trace[1024];
    snprintf(trace, sizeof trace, "{\"traceEvents\": [{\"name\": \"%s\", \"cat\": \"relu\", "
             "\"ph\": \"X\", \"ts\": 1, \"dur\": 2.5, \"pid\": 1, \"tid\": 0, \"args\": "
             "{\"run\": 0}}, {\"name\": \"m\", \"ph\": \"M\"}]}",
             "<\\/script><script>alert(2)<\\/script>\\\"");
    spit(path_in("hostile.json"), trace);
    const char *out = path_in("hostile.html");
    CHECK_OK(tg_graph_to_html(g, out, &(tg_html_options){.title = hostile,
                                                         .profile = path_in("hostile.json")}));
    char *page = slurp(out);
    /* the template's three script elements end, nothing else does */
    CHECK(page && count(page, "</script>") == 3);
    CHECK(page && !strstr(page, "<script>alert") && !strstr(page, "alert(1)</script>"));
    CHECK(page && strstr(page, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
    tg_json *data = page_data(page);
    const tg_json *title = data ? tg_json_get(data, "title") : NULL;
    CHECK(title && title->type == TG_JSON_STRING && !strcmp(title->str, hostile));
    const tg_json *prof = data ? tg_json_get(data, "profile") : NULL;
    const tg_json *ev = prof ? tg_json_get(prof, "events") : NULL;
    CHECK(ev && ev->n == 1); /* the metadata event is skipped */
    CHECK(ev && ev->n == 1 && ev->items[0].items[0].type == TG_JSON_STRING &&
          !strcmp(ev->items[0].items[0].str, "</script><script>alert(2)</script>\""));
    tg_json_free(data);
    free(page);
    tg_graph_free(g);
    tg_scope_end();
}

static void test_unknown_dims(void)
{
    tg_scope_begin();
    tg_tensor *x;
    tg_graph *g = small_graph("dynamic", -1, &x);
    const char *out = path_in("dynamic.html");
    /* without tensors for the unknown dim: the graph as built, and why */
    CHECK_OK(tg_graph_to_html(g, out, NULL));
    char *page = slurp(out);
    tg_json *data = page_data(page);
    const tg_json *e0 = level(data, 0) ? tg_json_get(level(data, 0), "error") : NULL;
    CHECK(e0 && strstr(e0->str, "unknown dims"));
    CHECK(node_count(level(data, 0)) == tg_graph_num_nodes(g));
    CHECK(level(data, 2) && tg_json_get(level(data, 2), "error") && node_count(level(data, 2)) < 0);
    tg_json_free(data);
    free(page);
    /* with them: every level planned for 5 rows */
    tg_tensor *five = tg_zeros(TG_FLOAT32, 2, (int64_t[]){5, 3});
    CHECK_OK(tg_graph_to_html(g, out, &(tg_html_options){.n_feeds = 1, .feeds = &x,
                                                         .feed_tensors = &five}));
    page = slurp(out);
    data = page_data(page);
    CHECK(level(data, 2) && !tg_json_get(level(data, 2), "error") && node_count(level(data, 2)) > 0);
    tg_json_free(data);
    free(page);
    tg_graph_free(g);
    tg_scope_end();
}

static void test_errors(void)
{
    tg_scope_begin();
    tg_tensor *x;
    tg_graph *g = small_graph("errors", 4, &x);
    const char *out = path_in("errors.html");
    CHECK_FAILS(tg_graph_to_html(NULL, out, NULL), TG_ERR_ARG, "graph or path is NULL");
    CHECK_FAILS(tg_graph_to_html(g, NULL, NULL), TG_ERR_ARG, "graph or path is NULL");
    CHECK_FAILS(tg_graph_to_html(g, out, &(tg_html_options){.level = 3}), TG_ERR_ARG,
                "level is not 0, 1 or 2");
    CHECK_FAILS(tg_graph_to_html(g, out, &(tg_html_options){.n_fetches = 1}), TG_ERR_ARG,
                "list with a count is NULL");
    spit(out, "old page");
    CHECK_FAILS(tg_graph_to_html(g, out, &(tg_html_options){.profile = path_in("none.json")}),
                TG_ERR_IO, "none.json");
    spit(path_in("bad.json"), "{\"traceEvents\": [");
    CHECK_FAILS(tg_graph_to_html(g, out, &(tg_html_options){.profile = path_in("bad.json")}),
                TG_ERR_IO, "is not JSON");
    spit(path_in("other.json"), "{\"events\": []}");
    CHECK_FAILS(tg_graph_to_html(g, out, &(tg_html_options){.profile = path_in("other.json")}),
                TG_ERR_IO, "no \"traceEvents\" array");
    spit(path_in("nodur.json"), "{\"traceEvents\": [{\"name\": \"a\", \"ph\": \"X\", \"ts\": 1, "
                                "\"dur\": 1, \"tid\": 0}, {\"name\": \"b\", \"ph\": \"X\", "
                                "\"ts\": 1, \"tid\": 0}]}");
    CHECK_FAILS(tg_graph_to_html(g, out, &(tg_html_options){.profile = path_in("nodur.json")}),
                TG_ERR_IO, "event 1 lacks \"dur\"");
    char *page = slurp(out); /* every failure left the old file as it was */
    CHECK(page && !strcmp(page, "old page"));
    free(page);
    CHECK_FAILS(tg_graph_to_html(g, path_in("no/such/dir/x.html"), NULL), TG_ERR_IO, "x.html");
    tg_graph_free(g);
    tg_scope_end();
}

/* forward, backward (what tg_graph_gradients made, and what is computed
 * from it) and update nodes are classed apart, at every level */
static const char *class_of(const tg_json *lvl, const char *op)
{
    const tg_json *g = lvl ? tg_json_get(lvl, "graph") : NULL;
    const tg_json *nodes = g ? tg_json_get(g, "nodes") : NULL;
    for (int i = 0; nodes && i < nodes->n; i++) {
        const tg_json *o = tg_json_get(&nodes->items[i], "op"),
                      *c = tg_json_get(&nodes->items[i], "cls");
        if (!strcmp(o->str, op))
            return c ? c->str : "";
    }
    return NULL;
}

static void test_node_classes(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("step");
    tg_graph_begin(g);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){4, 3});
    tg_tensor *w = tg_variable(g, "w", tg_ones(TG_FLOAT32, 1, (int64_t[]){3}));
    tg_tensor *loss = tg_sum(tg_tanh(tg_mul(x, w)), 0, NULL, false);
    tg_tensor *dw = NULL;
    CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 1, &w, &dw));
    tg_tensor *update = tg_assign_sub(w, dw, 0.1);
    tg_graph_end();
    const char *out = path_in("step.html");
    CHECK_OK(tg_graph_to_html(g, out, &(tg_html_options){.n_feeds = 1, .feeds = &x,
                                                         .n_fetches = 1, .fetches = &loss,
                                                         .n_targets = 1, .targets = &update}));
    char *page = slurp(out);
    tg_json *data = page_data(page);
    for (int lv = 0; lv < 3; lv++) {
        const char *t = class_of(level(data, lv), lv < 2 ? "tanh" : "fused_elementwise"),
                   *a = class_of(level(data, lv), "assign_sub");
        CHECK(t && !strcmp(t, "fwd")); /* level 2: tanh fused with the product */
        CHECK(a && !strcmp(a, "upd"));
    }
    /* level 2 fuses the backward's elementwise ops, whose only backward
     * input was the seed (a constant): the fused node is backward still */
    const tg_json *n2 = tg_json_get(tg_json_get(level(data, 2), "graph"), "nodes");
    int fused_bwd = 0;
    for (int i = 0; n2 && i < n2->n; i++) {
        const tg_json *o = tg_json_get(&n2->items[i], "op"), *c = tg_json_get(&n2->items[i], "cls");
        fused_bwd += !strcmp(o->str, "fused_elementwise") && c && !strcmp(c->str, "bwd");
    }
    CHECK(fused_bwd == 1);
    const char *m = class_of(level(data, 0), "mul"); /* the forward product comes first */
    CHECK(m && !strcmp(m, "fwd"));
    int bwd = 0;
    const tg_json *nodes = tg_json_get(tg_json_get(level(data, 0), "graph"), "nodes");
    for (int i = 0; nodes && i < nodes->n; i++) {
        const tg_json *c = tg_json_get(&nodes->items[i], "cls");
        bwd += c && !strcmp(c->str, "bwd");
    }
    CHECK(bwd >= 2); /* tanh's derivative and the product with x at least */
    tg_json_free(data);
    free(page);
    tg_graph_free(g);
    tg_scope_end();
}

static int hook_calls;
static const char *where_from(void *user)
{
    hook_calls++;
    return (const char *)user;
}

static void test_source_locations(void)
{
    tg_scope_begin();
    tg_graph_set_location_hook(where_from, "model.c:7");
    tg_tensor *x;
    tg_graph *g = small_graph("located", 4, &x);
    tg_graph_set_location_hook(NULL, NULL);
    CHECK(hook_calls >= tg_graph_num_nodes(g));
    const char *loc = tg_graph_node_location(x);
    CHECK(loc && !strcmp(loc, "model.c:7"));
    tg_tensor *after = tg_placeholder(g, "after", TG_FLOAT32, 0, NULL); /* the hook is gone */
    CHECK(after && tg_graph_node_location(after) == NULL);
    CHECK_ERROR(tg_graph_node_location(tg_zeros(TG_FLOAT32, 0, NULL)), TG_ERR_ARG, "not symbolic");
    const char *out = path_in("located.html");
    CHECK_OK(tg_graph_to_html(g, out, NULL));
    char *page = slurp(out);
    tg_json *data = page_data(page);
    /* level 2 copies the relu into a fused node, but keeps the others' locations */
    for (int lv = 0; lv < 3; lv += 2) {
        const tg_json *g0 = level(data, lv) ? tg_json_get(level(data, lv), "graph") : NULL;
        const tg_json *nodes = g0 ? tg_json_get(g0, "nodes") : NULL;
        int located = 0;
        for (int i = 0; nodes && i < nodes->n; i++) {
            const tg_json *l = tg_json_get(&nodes->items[i], "loc");
            located += l && !strcmp(l->str, "model.c:7");
        }
        CHECK(located > 0);
    }
    tg_json_free(data);
    free(page);
    tg_graph_free(g);
    tg_scope_end();
}

/* ---- in a real browser ---------------------------------------------------------- */
static const char *chromium(void)
{
    static const char *const where[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser",
                                        "/usr/bin/google-chrome"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
        if (access(where[i], X_OK) == 0)
            return where[i];
    return NULL;
}

/* the page's self-test verdict, run headless (NULL: no verdict) */
static tg_json *selftest(const char *browser, const char *page)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "timeout 120 %s --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
             "--disable-background-networking --disable-component-update --disable-sync "
             "--user-data-dir=%s/profile --dump-dom --virtual-time-budget=5000 "
             "'file://%s#selftest' 2>/dev/null", browser, dir, page);
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    tg_strbuf dom = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        tg__strbuf_append(&dom, buf, n);
    pclose(p);
    const char *open = "<pre id=\"tg-selftest\">";
    /* the last one: the page's script, also in the DOM, may name the element */
    char *a = NULL, *b = NULL;
    for (char *at = dom.data; at && (at = strstr(at, open)); at++)
        a = at;
    b = a ? strstr(a, "</pre>") : NULL;
    tg_json *v = NULL;
    if (b) {
        /* the DOM escapes text: the verdict holds &quot; only as JSON's \" */
        *b = 0;
        a += strlen(open);
        tg_strbuf text = {0};
        for (const char *s = a; *s; s++) {
            static const char *const ents[][2] = {{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"},
                                                  {"&quot;", "\""}};
            size_t k = 0;
            while (k < 4 && strncmp(s, ents[k][0], strlen(ents[k][0])))
                k++;
            if (k < 4) {
                tg__strbuf_puts(&text, ents[k][1]);
                s += strlen(ents[k][0]) - 1;
            } else {
                tg__strbuf_append(&text, s, 1);
            }
        }
        char err[200];
        v = text.data ? tg_json_parse(text.data, text.len, err, sizeof err) : NULL;
        if (!v)
            fprintf(stderr, "the verdict is not JSON: %s\n%s\n", err, text.data ? text.data : "");
        tg__strbuf_free(&text);
    }
    tg__strbuf_free(&dom);
    return v;
}

static const char *browser;

static void test_in_browser(void)
{
    tg_json *v = selftest(browser, path_in("hostile.html"));
    CHECK(v != NULL);
    const tg_json *errors = v ? tg_json_get(v, "errors") : NULL;
    CHECK(errors && errors->type == TG_JSON_ARRAY && errors->n == 0);
    for (int i = 0; errors && i < errors->n; i++)
        fprintf(stderr, "page error: %s\n", errors->items[i].str);
    const tg_json *title = v ? tg_json_get(v, "title") : NULL;
    CHECK(title && !strcmp(title->str, hostile)); /* shown as text, not run */
    const tg_json *levels = v ? tg_json_get(v, "levels") : NULL;
    CHECK(levels && levels->n == 3);
    for (int i = 0; levels && i < levels->n; i++)
        CHECK(tg_json_get(&levels->items[i], "drawn")->num ==
              tg_json_get(&levels->items[i], "nodes")->num);
    const tg_json *prof = v ? tg_json_get(v, "profile") : NULL;
    CHECK(prof && tg_json_get(prof, "spans")->num == 1);
    tg_json_free(v);
}

/* nested graphs (loop and branch bodies, graph attributes) are clusters:
 * the page opens one into its body's nodes. The data is written here as
 * graph_json.c writes a node with a graph attribute ("sub"), in a page
 * made by tg_graph_to_html, so the script is the library's own. */
static void test_nested_cluster_in_browser(void)
{
    char *page = slurp(path_in("small.html"));
    const char *open = "id=\"tg-data\">";
    char *a = page ? strstr(page, open) : NULL, *b = a ? strstr(a, "</script>") : NULL;
    CHECK(b != NULL);
    if (!b) {
        free(page);
        return;
    }
    a += strlen(open);
    static const char body[] =
        "{\"name\":\"body\",\"nodes\":["
        "{\"id\":0,\"name\":\"i\",\"kind\":\"placeholder\",\"op\":\"placeholder\",\"attrs\":[],"
        "\"in\":[],\"out\":[[\"int64\",[]]],\"ctrl\":[],\"order\":[]},"
        "{\"id\":1,\"name\":\"next\",\"kind\":\"op\",\"op\":\"add\",\"attrs\":[],"
        "\"in\":[[0,0],[0,0]],\"out\":[[\"int64\",[]]],\"ctrl\":[],\"order\":[]}]}";
    tg_strbuf level = {0}, data = {0};
    tg__strbuf_printf(&level,
        "\"graph\":{\"name\":\"g\",\"nodes\":["
        "{\"id\":0,\"name\":\"n\",\"kind\":\"placeholder\",\"op\":\"placeholder\",\"attrs\":[],"
        "\"in\":[],\"out\":[[\"int64\",[]]],\"ctrl\":[],\"order\":[]},"
        "{\"id\":1,\"name\":\"loop\",\"kind\":\"op\",\"op\":\"while_loop\","
        "\"attrs\":[[\"body\",\"graph body\"]],\"in\":[[0,0]],\"out\":[[\"int64\",[]]],"
        "\"ctrl\":[],\"order\":[],\"sub\":[{\"attr\":\"body\",\"graph\":%s}]}]},"
        "\"passes\":[]", body);
    tg__strbuf_puts(&data, "{\"format\":1,\"title\":\"nested\",\"version\":\"0\","
                           "\"initial_level\":0,\"levels\":[");
    for (int i = 0; i < 3; i++)
        tg__strbuf_printf(&data, "%s{\"level\":%d,%s}", i ? "," : "", i, level.data);
    tg__strbuf_puts(&data, "]}");
    FILE *f = fopen(path_in("nested.html"), "w");
    if (f) {
        fwrite(page, 1, (size_t)(a - page), f);
        fputs(data.data, f);
        fputs(b, f);
        fclose(f);
    }
    tg__strbuf_free(&level);
    tg__strbuf_free(&data);
    free(page);
    tg_json *v = selftest(browser, path_in("nested.html"));
    const tg_json *errors = v ? tg_json_get(v, "errors") : NULL;
    CHECK(errors && errors->n == 0);
    const tg_json *c = v ? tg_json_get(v, "cluster") : NULL;
    /* closed: 2 nodes; open: the placeholder and the body's 2 nodes */
    CHECK(c && tg_json_get(c, "before")->num == 2 && tg_json_get(c, "after")->num == 3);
    tg_json_free(v);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_page_data);
    RUN(test_hostile_names);
    RUN(test_unknown_dims);
    RUN(test_errors);
    RUN(test_source_locations);
    RUN(test_node_classes);
    if ((browser = chromium())) {
        RUN(test_in_browser);
        RUN(test_nested_cluster_in_browser);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!getenv("TG_KEEP") && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    int status = tt_finish();
    if (status == 0 && !browser) {
        printf("skipped the browser checks: no chromium (apt-get install chromium)\n");
        return 77;
    }
    return status;
}
