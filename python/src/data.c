/* Data, checkpoints, MNIST, ONNX. */
#include "tgpy.h"

int tgpy_init_data(PyObject *m) { (void)m; return 0; }
