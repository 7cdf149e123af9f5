/* The profiler: the spans of a session's runs (each node's step, on its
 * device's track in partitioned runs, the workers' included), written as
 * a Chrome trace (tg_session_trace_begin / _end). */
#include "io/atomic_file.h"
#include "io/json.h"
#include "io/wire.h"
#include "runtime/session_impl.h"
#include "util/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tg__session_free_events(tg_session *s)
{
    for (int64_t i = 0; i < s->n_events; i++)
        free(s->events[i].name);
    free(s->events);
    s->events = NULL;
    s->n_events = s->cap_events = 0;
}

tg_status tg__session_record_spans(tg_session *s, const tg_graph *g, const tg_trace_span *spans,
                                   int n)
{
    for (int k = 0; k < n; k++) {
        if (spans[k].node < 0)
            continue;
        if (!TG_GROW(s->events, s->cap_events, s->n_events + 1))
            return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory "
                             "recording the trace");
        const tg_gnode *n = &g->nodes[spans[k].node];
        char *name = strdup(n->name);
        if (!name)
            return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory "
                             "recording the trace");
        s->events[s->n_events++] = (trace_event){name, tg__gnode_op_name(n), spans[k].tid,
                                                 s->trace_runs, spans[k].t0, spans[k].t1};
    }
    s->trace_runs++;
    return TG_OK;
}

tg_status tg_session_trace_begin(tg_session *s)
{
    if (!s)
        return tg__error(TG_ERR_ARG, "tg_session_trace_begin: session is NULL");
    tg__session_free_events(s);
    s->tracing = true;
    s->trace_t0 = tg__now_ns();
    s->trace_runs = 0;
    return TG_OK;
}

static void write_event(tg_strbuf *b, const trace_event *e, int64_t t0, bool first)
{
    tg__strbuf_puts(b, first ? "\n  {\"name\": " : ",\n  {\"name\": ");
    tg_json_put_string(b, e->name);
    tg__strbuf_puts(b, ", \"cat\": ");
    tg_json_put_string(b, e->op);
    tg__strbuf_printf(b, ", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": 1, "
                     "\"tid\": %d, \"args\": {\"run\": %d}}",
                     (double)(e->t0 - t0) / 1e3, (double)(e->t1 - e->t0) / 1e3, e->tid,
                     e->run);
}

tg_status tg_session_trace_end(tg_session *s, const char *path)
{
    if (!s)
        return tg__error(TG_ERR_ARG, "tg_session_trace_end: session is NULL");
    if (!s->tracing)
        return tg__error(TG_ERR_ARG, "tg_session_trace_end: no trace was begun "
                         "(tg_session_trace_begin)");
    s->tracing = false;
    tg_status st = TG_OK;
    if (path) {
        tg_strbuf b = {0};
        tg__strbuf_puts(&b, "{\"traceEvents\": [");
        for (int64_t i = 0; i < s->n_events; i++)
            write_event(&b, &s->events[i], s->trace_t0, i == 0);
        for (int i = 0; i < s->n_tracks; i++) /* a partitioned run: a track per device */
            if (s->tracks[i]) {
                tg__strbuf_printf(&b, "%s\n  {\"name\": \"thread_name\", \"ph\": \"M\", "
                                  "\"pid\": 1, \"tid\": %d, \"args\": {\"name\": ",
                                  s->n_events || i ? "," : "", i);
                tg_json_put_string(&b, s->tracks[i]);
                tg__strbuf_puts(&b, "}}");
            }
        tg__strbuf_puts(&b, "\n], \"displayTimeUnit\": \"ms\"}\n");
        st = b.failed ? tg__error(TG_ERR_NOMEM, "tg_session_trace_end: out of memory")
                      : tg__atomic_write(path, b.data, b.len, "tg_session_trace_end");
        tg__strbuf_free(&b);
    }
    tg__session_free_events(s);
    return st;
}

void tg__session_trace_sync(const tg_session *parent, tg_session *sub)
{
    sub->tracing = parent->tracing;
    sub->trace_runs = parent->trace_runs;
}

tg_status tg__session_trace_adopt(tg_session *parent, tg_session *sub, const char *track,
                                  int tid)
{
    if (!parent->tracing)
        return TG_OK;
    if (tid >= parent->n_tracks) {
        char **t = realloc(parent->tracks, ((size_t)tid + 1) * sizeof *t);
        if (!t)
            return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory recording the trace");
        for (int i = parent->n_tracks; i <= tid; i++)
            t[i] = NULL;
        parent->tracks = t;
        parent->n_tracks = tid + 1;
    }
    if (!parent->tracks[tid] && !(parent->tracks[tid] = strdup(track)))
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory recording the trace");
    for (int64_t i = 0; i < sub->n_events; i++) {
        if (!TG_GROW(parent->events, parent->cap_events, parent->n_events + 1))
            return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory recording the trace");
        parent->events[parent->n_events++] = sub->events[i];
        sub->events[i].name = NULL; /* moved */
    }
    tg__session_free_events(sub);
    return TG_OK;
}

/* ---- traces of partitions run in other processes ----------------------------------------- */
void tg__session_trace_on(tg_session *s)
{
    if (!s->tracing)
        tg_session_trace_begin(s);
}

tg_status tg__session_trace_export(tg_session *s, tg_strbuf *b)
{
    tg__wire_u32(b, (uint32_t)s->n_events);
    for (int64_t i = 0; i < s->n_events; i++) {
        tg__wire_str(b, s->events[i].name);
        tg__wire_str(b, s->events[i].op);
        tg__wire_u64(b, (uint64_t)s->events[i].t0);
        tg__wire_u64(b, (uint64_t)s->events[i].t1);
    }
    tg__session_free_events(s);
    return b->failed ? tg__error(TG_ERR_NOMEM, "tracing: out of memory") : TG_OK;
}

/* the op name as the static string events keep: the registry's, or a kind */
static const char *static_op(const char *op)
{
    static const char *const kinds[] = {"body", "placeholder", "variable", "constant"};
    const tg_op_def *d = tg_op_find(op);
    if (d)
        return d->name;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        if (!strcmp(op, kinds[k]))
            return kinds[k];
    return "remote";
}

tg_status tg__session_trace_import(tg_session *parent, tg_wire_reader *r, const char *track,
                                   int tid, int64_t offset_ns)
{
    tg_session sub = {0}; /* the events, gathered as a partition's session has them */
    uint32_t n = tg__wire_get_count(r, 24);
    tg_status st = TG_OK;
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        char *name = tg__wire_get_str(r), *op = tg__wire_get_str(r);
        int64_t t0 = (int64_t)tg__wire_get_u64(r), t1 = (int64_t)tg__wire_get_u64(r);
        if (!r->failed && TG_GROW(sub.events, sub.cap_events, sub.n_events + 1)) {
            sub.events[sub.n_events++] = (trace_event){name, static_op(op), tid,
                                                       parent->trace_runs, t0 + offset_ns,
                                                       t1 + offset_ns};
            name = NULL;
        } else if (!r->failed) {
            st = tg__error(TG_ERR_NOMEM, "tracing: out of memory");
            r->failed = true;
        }
        free(name);
        free(op);
    }
    if (r->failed && st == TG_OK)
        st = tg_last_status();
    if (st == TG_OK)
        st = tg__session_trace_adopt(parent, &sub, track, tid);
    tg__session_free_events(&sub);
    return st;
}

bool tg__session_tracing(const tg_session *s) { return s->tracing; }

void tg__session_trace_next(tg_session *s)
{
    if (s->tracing)
        s->trace_runs++;
}
