#!/usr/bin/env bash
# An editor set up as docs/editors.md says, with no model named anywhere and nothing but
# the default model downloaded: the daemon that `hearth lsp` starts must find it.
#   run_default_model.sh HEARTH_BINARY MODEL nvim|vscode
# A private HOME and XDG tree: <cache>/hearth/models/default.gguf is a link to MODEL (the
# tiny fixture model, so the test is quick), no config file, no HEARTH_MODEL, `hearth` on
# PATH, and a runtime directory of mode 700. The editor side:
#   nvim    README's setup, `cmd = { hearth, 'lsp' }` (nvim/test_default_model.lua)
#   vscode  the extension's settings at their defaults (hearth.daemonPath and hearth.modelPath
#           unset) turned into the `hearth lsp` command line by its own modules
# The daemon that `hearth lsp` starts outlives it (as it does for an editor); it is stopped
# here afterwards, and its log is printed on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="$(realpath "$1")" model="$2" kind="$3"
[ -x "$bin" ] || { echo "hearth binary not found: $bin"; exit 1; }
[ -f "$model" ] || { echo "model not found: $model"; exit 1; }

tree="$(mktemp -d)"
cleanup() {
  local rc=$?
  local lock="$tree/run/hearth/hearth.sock.lock" pid=""
  [ -f "$lock" ] && pid="$(tr -dc 0-9 <"$lock")"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ "$rc" -ne 0 ] && [ -f "$tree/state/hearth/hearth.log" ]; then
    echo "---- daemon log, last 40 lines"; tail -40 "$tree/state/hearth/hearth.log"
  fi
  rm -rf "$tree"
  exit "$rc"
}
trap cleanup EXIT
mkdir -p "$tree/home" "$tree/cache/hearth/models" "$tree/config" "$tree/state" "$tree/data" "$tree/bin"
mkdir -m 700 "$tree/run"
ln -s "$(cd "$(dirname "$model")" && pwd)/$(basename "$model")" "$tree/cache/hearth/models/default.gguf"
ln -s "$bin" "$tree/bin/hearth"
export HOME="$tree/home" XDG_CACHE_HOME="$tree/cache" XDG_CONFIG_HOME="$tree/config" XDG_STATE_HOME="$tree/state"
export XDG_DATA_HOME="$tree/data" XDG_RUNTIME_DIR="$tree/run" PATH="$tree/bin:$PATH"
export HEARTH_TEST_XDG="$tree" HEARTH_DEFAULT_MODEL_LINK="$tree/cache/hearth/models/default.gguf"
unset HEARTH_MODEL

case "$kind" in
  nvim) "$here/run_nvim.sh" system "$here/nvim/test_default_model.lua" ;;
  vscode)
    [ -d "$repo/plugins/vscode/node_modules" ] || { echo "plugins/vscode/node_modules is missing: run scripts/setup"; exit 1; }
    (cd "$repo/plugins/vscode" && node_modules/.bin/tsc -p .)
    node --test "$here/default_model_vscode.test.js"
    ;;
  *) echo "unknown kind $kind"; exit 2 ;;
esac
