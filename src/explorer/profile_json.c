/* The profile on the explorer page: the complete spans ("ph": "X") of a
 * Chrome trace as tg_session_trace_end writes it (tg train --profile),
 * re-written compactly as [name, category, start, duration, thread, run]
 * (microseconds). The file is read as hostile input: the strict JSON
 * reader, and every field of a span checked; anything else is an error
 * naming the file and the span. Other events (metadata) are skipped. */
#include "explorer/explorer.h"
#include "io/json.h"
#include "io/regular_file.h"
#include "graph/graph_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRACE_BYTES ((long)1 << 30)

static char *read_all(const char *path, size_t *len)
{
    int64_t size;
    bool not_regular;
    FILE *f = tg__open_regular(path, &size, &not_regular);
    if (!f && not_regular)
        return tg__error_null(TG_ERR_IO, "tg_graph_to_html: the profile '%s' is not a regular "
                              "file", path);
    if (!f)
        return tg__error_null(TG_ERR_IO, "tg_graph_to_html: cannot open the profile '%s': %s",
                              path, strerror(errno));
    long n = (long)size;
    char *buf = n <= MAX_TRACE_BYTES ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (!buf)
        return tg__error_null(TG_ERR_IO, "tg_graph_to_html: cannot read the profile '%s' "
                              "(at most 1 GiB)", path);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static const tg_json *member(const tg_json *e, const char *key, tg_json_type type)
{
    const tg_json *v = e && e->type == TG_JSON_OBJECT ? tg_json_get(e, key) : NULL;
    return v && v->type == type ? v : NULL;
}

/* one span, or an error naming what is wrong with it */
static tg_status put_span(tg_strbuf *b, const tg_json *e, int i, bool *first, const char *path)
{
    const tg_json *ph = member(e, "ph", TG_JSON_STRING);
    if (ph && strcmp(ph->str, "X"))
        return TG_OK;
    const tg_json *name = member(e, "name", TG_JSON_STRING),
                  *ts = member(e, "ts", TG_JSON_NUMBER), *dur = member(e, "dur", TG_JSON_NUMBER),
                  *tid = member(e, "tid", TG_JSON_NUMBER), *cat = member(e, "cat", TG_JSON_STRING),
                  *run = member(member(e, "args", TG_JSON_OBJECT), "run", TG_JSON_NUMBER);
    if (!ph || !name || !ts || !dur || !tid)
        return tg__error(TG_ERR_IO, "tg_graph_to_html: the profile '%s' is not a Chrome trace "
                         "of tensorgraph: event %d lacks %s", path, i,
                         !ph ? "\"ph\"" : !name ? "a \"name\"" : !ts ? "\"ts\""
                         : !dur ? "\"dur\"" : "\"tid\"");
    tg__strbuf_puts(b, *first ? "[" : ",\n[");
    *first = false;
    tg_json_put_string(b, name->str);
    tg__strbuf_puts(b, ",");
    tg_json_put_string(b, cat ? cat->str : "");
    tg__strbuf_puts(b, ",");
    tg__json_number(b, ts->num);
    tg__strbuf_puts(b, ",");
    tg__json_number(b, dur->num);
    tg__strbuf_puts(b, ",");
    tg__json_number(b, tid->num);
    tg__strbuf_puts(b, ",");
    tg__json_number(b, run ? run->num : 0);
    tg__strbuf_puts(b, "]");
    return TG_OK;
}

tg_status tg__explorer_profile(tg_strbuf *b, const char *path)
{
    size_t len = 0;
    char *text = read_all(path, &len);
    if (!text)
        return tg_last_status();
    char err[200];
    tg_json *root = tg_json_parse(text, len, err, sizeof err);
    free(text);
    if (!root)
        return tg__error(TG_ERR_IO, "tg_graph_to_html: the profile '%s' is not JSON: %s", path,
                         err);
    /* {"traceEvents": [...]} or the bare array, both Chrome trace forms */
    const tg_json *events = root->type == TG_JSON_ARRAY ? root
                                                        : member(root, "traceEvents",
                                                                 TG_JSON_ARRAY);
    tg_status st = events ? TG_OK
                          : tg__error(TG_ERR_IO, "tg_graph_to_html: the profile '%s' has no "
                                      "\"traceEvents\" array (a Chrome trace, as tg train "
                                      "--profile writes, is expected)", path);
    if (st == TG_OK) {
        tg__strbuf_puts(b, "\"profile\":{\"file\":");
        tg_json_put_string(b, path);
        tg__strbuf_puts(b, ",\"events\":[");
    }
    bool first = true;
    for (int i = 0; st == TG_OK && i < events->n; i++)
        st = put_span(b, &events->items[i], i, &first, path);
    if (st == TG_OK)
        tg__strbuf_puts(b, "]}");
    tg_json_free(root);
    return st;
}
