/* libFuzzer target for the ONNX reader (src/io/onnx_model.c): see
 * onnx_exercise.h for what one input goes through, fuzz/run.sh to run. */
#include "onnx_exercise.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *problem = onnx_exercise(data, size);
    if (problem) {
        fprintf(stderr, "onnx fuzz: %s\n", problem);
        __builtin_trap();
    }
    return 0;
}
