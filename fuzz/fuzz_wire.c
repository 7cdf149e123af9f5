/* libFuzzer target for a graph's wire form (src/graph/serialize.h): the
 * bytes a worker process receives from its master, read as hostile. An
 * accepted graph is written again and read back, which must give a graph
 * of the same size. Any failure must be a clean error with a message.
 * fuzz/run.sh wire builds and runs it. */
#include "fuzz_check.h"
#include "graph/serialize.h"
#include "tg/core.h"
#include "tg/graph.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_graph *g = tg__graph_deserialize(data, size, "fuzz input", NULL, NULL);
    if (!g) {
        fuzz_require_message("fuzz_wire");
        return 0;
    }
    tg_strbuf b = {0};
    if (tg__graph_serialize(g, &b) == TG_OK && !b.failed) {
        tg_graph *back = tg__graph_deserialize(b.data, b.len, "round trip", NULL, NULL);
        if (!back || tg_graph_num_nodes(back) != tg_graph_num_nodes(g)) {
            fprintf(stderr, "fuzz_wire: a written graph did not read back: %s\n",
                    tg_last_error());
            abort();
        }
        tg_graph_free(back);
    }
    tg__strbuf_free(&b);
    tg_graph_free(g);
    return 0;
}
