/* The explorer page (tg_graph_to_html): its data as JSON, piece by piece,
 * each in its own file, and the page around it (page.c). Internal. */
#ifndef TG_EXPLORER_H
#define TG_EXPLORER_H

#include "runtime/runtime_impl.h"
#include "util/strbuf.h"

/* "levels":[...]: for each optimization level 0, 1, 2 the graph its plan
 * runs (nodes classed forward / backward / update, with their steps),
 * what each pass did, and the memory plan (levels.c). A level whose plan
 * cannot be made is written with its error (level 0 then draws the graph
 * as built). */
tg_status tg__explorer_levels(tg_strbuf *b, tg_graph *g, const tg_html_options *o);

/* "memory":{...}: the plan's peaks and its arena buffers, each with its
 * producer, offset, size and lifetime in steps (memory_json.c) */
void tg__explorer_memory(tg_strbuf *b, const tg_plan *p, const int *step_of_node);

/* "profile":{...}: the spans of a Chrome trace as tg_session_trace_end
 * writes it (profile_json.c); an error naming the file when it cannot be
 * read or is not such a trace */
tg_status tg__explorer_profile(tg_strbuf *b, const char *path);

#endif
