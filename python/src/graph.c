/* tg.function's C side (filled in below): tracing Python functions into
 * static graphs and running them in sessions. */
#include "tgpy.h"

int tgpy_tracing;
void tgpy_trace_note(tg_tensor *const *ts, int n) { (void)ts; (void)n; }
int tgpy_init_graph(PyObject *m) { (void)m; return 0; }
