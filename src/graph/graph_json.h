/* A graph as the explorer page's JSON (graph_json.c). Internal. */
#ifndef TG_GRAPH_GRAPH_JSON_H
#define TG_GRAPH_GRAPH_JSON_H

#include "graph/graph_impl.h"
#include "util/strbuf.h"

/* what a plan adds to the drawing of its graph; either array may be NULL */
typedef struct tg_graph_json_plan {
    const char *const *cls; /* per node: "fwd", "bwd", "upd", or NULL (sources) */
    const int *step;        /* per node: its step in the plan's order, -1: not run */
} tg_graph_json_plan;

/* appends g as one JSON object: {"name", "nodes": [...]} where a node is
 * {"id", "name", "kind", "op", "loc"? (source location), "cls"?, "step"?, "attrs": [[name, value]],
 *  "in": [[node, output]], "out": [[dtype, [dims]]], "ctrl": [ids],
 *  "order": [ids], "sub": [{"attr", "graph"}]}; graphs held by graph
 * attributes (loop and branch bodies) nest as "sub", to depth 8. Strings
 * are JSON-escaped; the page embedding makes them safe inside HTML. */
void tg__graph_json(tg_strbuf *b, const tg_graph *g, const tg_graph_json_plan *plan);
/* a double as JSON: non-finite values (which JSON lacks) as strings */
void tg__json_number(tg_strbuf *b, double x);

#endif
