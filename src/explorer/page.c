/* tg_graph_to_html: the explorer page, one self-contained file. The page's
 * markup, styles and script are the files of src/explorer/page/, embedded
 * into the library at build time (cmake/embed.cmake); the data is one
 * JSON document (levels, memory plans, profile) in a script element of
 * type application/json, which the browser never runs. Only JSON strings
 * can hold '<', '>' or '&' there, and they are written as \u escapes, so
 * no name (an ONNX model's, say: "</script><script>...") can end the
 * element or start markup; the script shows names with textContent only. */
#include "explorer/explorer.h"
#include "io/atomic_file.h"
#include "io/json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

extern const char tg__explorer_html[], tg__explorer_css[], tg__explorer_js[];

/* the data with '<', '>' and '&' as JSON escapes (they occur only in strings) */
static bool put_html_safe(FILE *f, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = s[i] == '<' ? "\\u003c" : s[i] == '>' ? "\\u003e"
                          : s[i] == '&' ? "\\u0026" : NULL;
        if (!esc)
            continue;
        if (fwrite(s + run, 1, i - run, f) != i - run || fputs(esc, f) < 0)
            return false;
        run = i + 1;
    }
    return fwrite(s + run, 1, n - run, f) == n - run;
}

static tg_status page_data(tg_strbuf *b, tg_graph *g, const tg_html_options *o)
{
    tg__strbuf_puts(b, "{\"format\":1,\"title\":");
    tg_json_put_string(b, o->title ? o->title : g->name);
    tg__strbuf_printf(b, ",\"version\":\"%s\",\"initial_level\":%d,", TG_VERSION, o->level);
    tg_status s = tg__explorer_levels(b, g, o);
    if (s == TG_OK && o->profile) {
        tg__strbuf_puts(b, ",\n");
        s = tg__explorer_profile(b, o->profile);
    }
    tg__strbuf_puts(b, "}");
    if (s == TG_OK && b->failed)
        s = tg__error(TG_ERR_NOMEM, "tg_graph_to_html: out of memory");
    return s;
}

/* the template's markers, replaced in this order */
static const char *const markers[] = {"<!--@STYLE@-->", "<!--@DATA@-->", "<!--@SCRIPT@-->"};

static bool write_page(FILE *f, const tg_strbuf *data)
{
    const char *t = tg__explorer_html;
    bool ok = true;
    for (int i = 0; i < 3 && ok; i++) {
        const char *at = strstr(t, markers[i]);
        if (!at)
            return false;
        ok = fwrite(t, 1, (size_t)(at - t), f) == (size_t)(at - t);
        if (i == 0)
            ok = ok && fputs(tg__explorer_css, f) >= 0;
        else if (i == 1)
            ok = ok && put_html_safe(f, data->data, data->len);
        else
            ok = ok && fputs(tg__explorer_js, f) >= 0;
        t = at + strlen(markers[i]);
    }
    return ok && fputs(t, f) >= 0;
}

tg_status tg_graph_to_html(tg_graph *g, const char *path, const tg_html_options *opts)
{
    if (!g || !path)
        return tg__error(TG_ERR_ARG, "tg_graph_to_html: graph or path is NULL");
    const tg_html_options none = {0};
    const tg_html_options *o = opts ? opts : &none;
    if (o->n_feeds < 0 || o->n_fetches < 0 || o->n_targets < 0 ||
        (o->n_feeds && !o->feeds) || (o->n_fetches && !o->fetches) ||
        (o->n_targets && !o->targets) || o->level < 0 || o->level > 2)
        return tg__error(TG_ERR_ARG, "tg_graph_to_html: a count is negative, or a list "
                         "with a count is NULL, or the level is not 0, 1 or 2");
    tg_strbuf data = {0};
    tg_status s = page_data(&data, g, o);
    if (s != TG_OK) {
        tg__strbuf_free(&data);
        return s;
    }
    tg__atomic_file af;
    s = tg__atomic_begin(&af, path, "tg_graph_to_html");
    if (s == TG_OK) {
        bool ok = write_page(af.f, &data);
        s = tg__atomic_end(&af, ok, ok ? 0 : errno, "tg_graph_to_html");
    }
    tg__strbuf_free(&data);
    return s;
}
