/* Optimizers (the C ones behind tensorgraph.optim). */
#include "tgpy.h"

int tgpy_init_train(PyObject *m) { (void)m; return 0; }
