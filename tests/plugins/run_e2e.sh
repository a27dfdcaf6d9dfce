#!/usr/bin/env bash
# End-to-end: the plugins' client code against the real daemon on the tiny fixture model.
#   run_e2e.sh HEARTH_BINARY MODEL nvim-system|nvim-current|vscode-client
# Starts `hearth daemon` in a private runtime directory (waiting on its ready pipe, not by
# polling), points the editor at `hearth lsp --runtime-dir DIR --no-start` (the shim an
# editor spawns), and stops the daemon afterwards. The daemon log is printed on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="$1" model="$2" kind="$3"
[ -x "$bin" ] || { echo "hearth binary not found: $bin"; exit 1; }
[ -f "$model" ] || { echo "model not found: $model"; exit 1; }

rt="$(mktemp -d)"
daemon_pid=""
cleanup() {
  local rc=$?
  if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ -f "$rt/daemon.log" ]; then
    echo "---- daemon log ($rt/daemon.log), last 40 lines"; tail -40 "$rt/daemon.log"
  fi
  rm -rf "$rt"
  exit "$rc"
}
trap cleanup EXIT

mkfifo "$rt/ready"
HEARTH_READY_FD=3 "$bin" daemon --model "$model" --runtime-dir "$rt" --log-file "$rt/daemon.log" \
  --log-level debug --threads 1 3>"$rt/ready" &
daemon_pid=$!
if ! read -r -t 60 -n 1 _ <"$rt/ready"; then
  echo "the daemon did not report ready (exited or timed out)"; exit 1
fi

export HEARTH_E2E_CMD="$bin"
export HEARTH_E2E_RUNTIME="$rt"
export HEARTH_E2E_MODEL="$model"
case "$kind" in
  nvim-system) "$here/run_nvim.sh" system "$here/nvim/test_e2e.lua" ;;
  nvim-current) "$here/run_nvim.sh" current "$here/nvim/test_e2e.lua" ;;
  vscode-client)
    [ -d "$repo/plugins/vscode/node_modules" ] || { echo "plugins/vscode/node_modules is missing: run scripts/setup"; exit 1; }
    (cd "$repo/plugins/vscode" && node_modules/.bin/tsc -p .)
    node --test "$here/vscode_client_e2e.test.js"
    ;;
  *) echo "unknown kind $kind"; exit 2 ;;
esac
