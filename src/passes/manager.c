/* The pass manager: the one registered list of passes (name, level,
 * function), and running it on the copy of the graph a plan executes:
 * the passes of the session's level that are not disabled, in list order,
 * each recorded (nodes before and after, what it changed) and, in debug
 * builds and the tests, followed by the graph verifier. */
#include "passes/passes.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

/* The order matters: simplification and folding expose common
 * subexpressions, all three leave dead nodes for dce, and the level-2
 * passes match patterns whose reader counts dead nodes would spoil (then
 * leave dead nodes of their own). */
const tg_pass_def tg__pass_list[] = {
    {"simplify", 1, tg__pass_simplify},
    {"fold", 1, tg__pass_fold},
    {"cse", 1, tg__pass_cse},
    {"dce", 1, tg__pass_dce},
    {"pool_grad", 2, tg__pass_pool_grad},
    {"pool_indices", 2, tg__pass_pool_indices},
    {"fuse_conv_pool", 2, tg__pass_fuse_conv_pool},
    {"pool_values", 2, tg__pass_pool_values},
    {"fuse_updates", 2, tg__pass_fuse_updates},
    {"fuse_pw_dw", 2, tg__pass_fuse_pw_dw},
    {"fuse_epilogue", 2, tg__pass_fuse_epilogue},
    {"fuse_elementwise", 2, tg__pass_fuse_elementwise},
    {"dce", 2, tg__pass_dce},
};
const int tg__pass_list_len = (int)(sizeof tg__pass_list / sizeof tg__pass_list[0]);

bool tg__pass_known(const char *name)
{
    for (int i = 0; name && i < tg__pass_list_len; i++)
        if (!strcmp(tg__pass_list[i].name, name))
            return true;
    return false;
}

int tg_pass_count(void)
{
    int n = 0; /* distinct names: a pass listed twice is one pass */
    for (int i = 0; i < tg__pass_list_len; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(tg__pass_list[i].name, tg__pass_list[j].name);
        n += !seen;
    }
    return n;
}

const char *tg_pass_info(int i, int *level)
{
    for (int k = 0; k < tg__pass_list_len; k++) {
        bool seen = false;
        for (int j = 0; j < k && !seen; j++)
            seen = !strcmp(tg__pass_list[k].name, tg__pass_list[j].name);
        if (!seen && i-- == 0) {
            if (level)
                *level = tg__pass_list[k].level;
            return tg__pass_list[k].name;
        }
    }
    return NULL;
}

bool tg__passes_verify(void)
{
#ifndef NDEBUG
    return true;
#else
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("TG_VERIFY_PASSES");
        on = e && *e && strcmp(e, "0") != 0;
    }
    return on;
#endif
}

void tg__pass_count(tg_pass_ctx *c, const char *what, int n)
{
    tg_pass_record *r = c->rec;
    if (!r || n == 0)
        return;
    for (int i = 0; i < r->n_counts; i++)
        if (!strcmp(r->counts[i].what, what)) {
            r->counts[i].n += n;
            return;
        }
    if (r->n_counts < TG_PASS_MAX_COUNTS)
        r->counts[r->n_counts++] = (tg_pass_count_entry){what, n};
}

tg_status tg__pass_add_guard(tg_pass_ctx *c, tg_tensor *t)
{
    if (tg__hmap_get(&c->guarded, t->storage) >= 0)
        return TG_OK;
    if (!TG_GROW(c->guards, c->cap_guards, c->n_guards + 1) ||
        !tg__hmap_put(&c->guarded, t->storage, c->n_guards))
        return tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
    c->guards[c->n_guards++] = (tg_fold_guard){tg_retain(t), t->storage->version};
    return TG_OK;
}

static bool disabled(const tg_passes_in *in, const char *name)
{
    for (int i = 0; i < in->n_disabled; i++)
        if (!strcmp(in->disabled[i], name))
            return true;
    return false;
}

static int count_nodes(const tg_graph *g) { return g->n_nodes; }

static tg_status run_one(tg_pass_ctx *c, const tg_pass_def *p, tg_pass_record *rec)
{
    *rec = (tg_pass_record){.pass = p->name, .nodes_before = count_nodes(c->g)};
    c->rec = rec;
    tg_status s = p->run(c);
    c->rec = NULL;
    rec->nodes_after = count_nodes(c->g);
    if (s == TG_OK && tg__passes_verify() && (s = tg_graph_verify(c->g)) != TG_OK) {
        char msg[768];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        s = tg__error(TG_ERR_INTERNAL, "graph pass '%s' left an invalid graph: %s",
                      p->name, msg);
    }
    return s;
}

void tg__passes_out_free(tg_passes_out *o)
{
    tg__graph_release(o->g);
    free(o->feeds);
    free(o->fetches);
    free(o->targets);
    free(o->records);
    for (int i = 0; i < o->n_guards; i++)
        tg_release(o->guards[i].t);
    free(o->guards);
    memset(o, 0, sizeof *o);
}

tg_status tg__passes_specialise(const tg_passes_in *in, tg_pass_ctx *c);

tg_status tg__passes_run(const tg_passes_in *in, tg_passes_out *out)
{
    memset(out, 0, sizeof *out);
    tg_pass_ctx c = {.n_feeds = in->n_feeds, .n_fetches = in->n_fetches,
                     .n_targets = in->n_targets};
    c.feeds = malloc(((size_t)in->n_feeds + 1) * sizeof(int));
    c.fetches = malloc(((size_t)in->n_fetches + 1) * sizeof(int));
    c.targets = malloc(((size_t)in->n_targets + 1) * sizeof(int));
    out->records = calloc((size_t)tg__pass_list_len + 1, sizeof *out->records);
    tg_status s = c.feeds && c.fetches && c.targets && out->records
                      ? TG_OK
                      : tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
    if (s == TG_OK)
        s = tg__passes_specialise(in, &c);
    if (s == TG_OK && tg__passes_verify() && (s = tg_graph_verify(c.g)) != TG_OK) {
        char msg[768];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        s = tg__error(TG_ERR_INTERNAL, "the copy of the graph for the passes is "
                      "invalid: %s", msg);
    }
    for (int i = 0; i < tg__pass_list_len && s == TG_OK; i++) {
        const tg_pass_def *p = &tg__pass_list[i];
        if (p->level > in->level || disabled(in, p->name))
            continue;
        s = run_one(&c, p, &out->records[out->n_records++]);
    }
    out->g = c.g;
    out->feeds = c.feeds;
    out->fetches = c.fetches;
    out->targets = c.targets;
    out->guards = c.guards;
    out->n_guards = c.n_guards;
    tg__hmap_free(&c.guarded);
    if (s != TG_OK)
        tg__passes_out_free(out);
    return s;
}
