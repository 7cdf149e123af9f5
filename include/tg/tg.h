/* tensorgraph: the umbrella header. Include this one. */
#ifndef TG_TG_H
#define TG_TG_H

#include "tg/core.h"
#include "tg/tensor.h"
#include "tg/ops.h"
#include "tg/autograd.h"
#include "tg/graph.h"
#include "tg/control.h"
#include "tg/runtime.h"
#include "tg/device.h"
#include "tg/nn.h"
#include "tg/data.h"
#include "tg/io.h"
#include "tg/optim.h"
#include "tg/onnx.h"
#include "tg/dist.h"
#include "tg/profiler.h"

#endif
