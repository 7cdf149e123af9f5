/* ONNX export (stub, replaced below). */
#include "io/onnx_ops.h"
tg_status tg_onnx_export(tg_graph *g, int n, tg_tensor *const *f, const char *path)
{ (void)g; (void)n; (void)f; (void)path; return tg__error(TG_ERR_UNSUPPORTED, "todo"); }
tg_status tg_onnx_export_module(tg_module *m, int ndim, const int64_t *shape, const char *path)
{ (void)m; (void)ndim; (void)shape; (void)path; return tg__error(TG_ERR_UNSUPPORTED, "todo"); }
