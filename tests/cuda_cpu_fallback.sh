#!/usr/bin/env bash
# A HEARTH_CUDA build on a machine without a CUDA driver or device: `hearth complete --gpu-layers
# all` must say why there is no CUDA device and give the CPU's completion, the same text as
# without --gpu-layers. Where a device is present (HEARTH_CUDA_PRESENT=1, scripts/gpu-check) the
# text must still be the CPU's and no fallback may be reported.
# usage: cuda_cpu_fallback.sh HEARTH_BINARY MODEL
set -euo pipefail
hearth="$1"
model="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
args=(complete -m "$model" --prompt "Once upon a time" -n 16 -t 1)
"$hearth" "${args[@]}" >"$tmp/cpu.out" 2>"$tmp/cpu.err"
"$hearth" "${args[@]}" --gpu-layers all >"$tmp/gpu.out" 2>"$tmp/gpu.err"
if ! cmp -s "$tmp/cpu.out" "$tmp/gpu.out"; then
  echo "FAIL: the completion with --gpu-layers all differs from the CPU's"
  diff "$tmp/cpu.out" "$tmp/gpu.out" || true
  cat "$tmp/gpu.err"
  exit 1
fi
[ -s "$tmp/cpu.out" ] || { echo "FAIL: empty completion"; cat "$tmp/cpu.err"; exit 1; }
if [ "${HEARTH_CUDA_PRESENT:-0}" = 1 ]; then
  if grep -q "running on the CPU" "$tmp/gpu.err"; then
    echo "FAIL: a CUDA device is present but the layers ran on the CPU:"
    cat "$tmp/gpu.err"
    exit 1
  fi
  echo "ok: the layers ran on the CUDA device and gave the CPU's completion"
  exit 0
fi
if ! grep -q "no CUDA device: .*(cuda[A-Za-z]*, error [0-9]*).*running on the CPU" "$tmp/gpu.err"; then
  echo "FAIL: expected the reason there is no CUDA device on stderr, got:"
  cat "$tmp/gpu.err"
  exit 1
fi
echo "ok: $(grep "no CUDA device" "$tmp/gpu.err")"
echo "ok: the completion is the CPU's: $(head -c 200 "$tmp/gpu.out")"
