#!/usr/bin/env bash
# Builds the parser tests (GGUF, tokenizer, KV slot files) and fuzz-corpus replays (HTTP requests too) with
# ASan+UBSan and runs them.
#   tests/sanitize/run.sh SOURCE_DIR BUILD_DIR FIXTURES_DIR
set -euo pipefail
src="$1" build="$2" fixtures="$3"
# The parsers only: no GPU backend in this tree (it would double the build, and parses nothing).
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEARTH_SANITIZE=ON -DHEARTH_BENCH=OFF -DHEARTH_VULKAN=OFF \
    -DHEARTH_FIXTURES_DIR="$fixtures" $(command -v ninja >/dev/null && echo -G Ninja) >/dev/null
fi
targets=(hearth_test_lsp hearth_test_inference fuzz_gguf_replay fuzz_jsonrpc_replay fuzz_slot_replay fuzz_tokenizer_replay fuzz_http_replay)
cmake --build "$build" --target "${targets[@]}" -j "${HEARTH_SANITIZE_JOBS:-2}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$build/tests/hearth_test_lsp" "~[.bench]"
"$build/tests/hearth_test_inference" "[gguf],[tokenizer],[slot_store]"
for name in gguf jsonrpc slot tokenizer http; do
  "$build/tests/fuzz/fuzz_${name}_replay" "$src/tests/fuzz/corpus/$name"
done
echo "sanitize_parsers: ASan+UBSan clean"
