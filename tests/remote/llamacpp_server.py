"""Runs llama-cpp-python's own server (`python -m llama_cpp.server`, same arguments) with the
CPU's extra weight buffer types off: llama.cpp's AMX matmul crashes (SIGSEGV in
ggml_backend_amx_mul_mat) on the Q4_K_M default model on CPUs with AMX, as llama-cpp-python
0.3.36 builds it with GGML_NATIVE. Everything else is the server as released."""
import runpy

import llama_cpp.llama_cpp as capi

_default_model_params = capi.llama_model_default_params


def _model_params_without_extra_buffers():
    p = _default_model_params()
    p.use_extra_bufts = False
    return p


capi.llama_model_default_params = _model_params_without_extra_buffers
runpy.run_module("llama_cpp.server", run_name="__main__")
