// The runtime's errors as hearth errors: its text, its name and its number.
#pragma once

#include <cuda_runtime.h>

#include "base/result.h"

namespace hearth::kernels::cuda {

inline error cuda_error(const char * what, cudaError_t e) {
    return fail(what, ": ", cudaGetErrorString(e), " (", cudaGetErrorName(e), ", error ", static_cast<int>(e), ")");
}

inline cudaStream_t as_stream(void * s) { return static_cast<cudaStream_t>(s); }

}  // namespace hearth::kernels::cuda
