#!/usr/bin/env bash
# End-to-end: the plugins' client code against the real daemon.
#   run_e2e.sh HEARTH_BINARY MODEL nvim-system|nvim-current|vscode-client|nvim-next-edit
# Starts `hearth daemon` in a private runtime directory (waiting on its ready pipe, not by
# polling; the tiny model's head size of 8 needs an f16 KV cache), points the editor at
# `hearth lsp --runtime-dir DIR --no-start` (the shim an editor spawns), and stops the
# daemon afterwards. The daemon log is printed on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="$1" model="$2" kind="$3"
[ -x "$bin" ] || { echo "hearth binary not found: $bin"; exit 1; }
# The model: HEARTH_E2E_MODEL if set; else the default model when scripts/test found it
# (HEARTH_DEFAULT_MODEL, Qwen2.5-Coder: it has fill-in-the-middle tokens and a chat
# template, which the daemon needs to complete and to chat); else MODEL, the tiny fixture
# model (which has neither, so only the plumbing up to the daemon's error can work).
default_name="$(awk '$1 == "default" { print $2 }' "$repo/scripts/models.lock" 2>/dev/null || true)"
cached_default="${XDG_CACHE_HOME:-$HOME/.cache}/hearth/models/$default_name.gguf"
if [ -n "${HEARTH_E2E_MODEL:-}" ]; then model="$HEARTH_E2E_MODEL"
elif [ -n "${HEARTH_DEFAULT_MODEL:-}" ] && [ -f "$HEARTH_DEFAULT_MODEL" ]; then model="$HEARTH_DEFAULT_MODEL"
elif [ -n "$default_name" ] && [ -f "$cached_default" ]; then model="$cached_default"   # fetched before
fi
[ -f "$model" ] || { echo "model not found: $model"; exit 1; }
echo "model: $model"
# Until the hearth binary has its daemon and lsp subcommands there is nothing to test
# against: say so and skip (ctest shows the test as skipped, with this message).
help="$("$bin" --help 2>&1 || true)"
for sub in daemon lsp; do
  if ! grep -Eq "^[[:space:]]+$sub[[:space:]]" <<<"$help"; then
    echo "SKIP: $bin has no '$sub' subcommand yet"; exit 77
  fi
done

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

# Generous time budgets: a loaded 2-core machine can spend seconds on a cold prompt, and a
# budget spent before the first token means an empty (but valid) answer. Short answers
# keep the test quick.
cat >"$rt/config.toml" <<'TOML'
[completion]
time-budget-ms = 60000
max-tokens = 24
[chat]
max-tokens = 64
TOML
mkfifo "$rt/ready"
HEARTH_READY_FD=3 "$bin" daemon --config "$rt/config.toml" --model "$model" --runtime-dir "$rt" --log-file "$rt/daemon.log" \
  --log-level debug --threads "${HEARTH_E2E_THREADS:-1}" --cache-type f16 3>"$rt/ready" &
daemon_pid=$!
if ! read -r -t 60 -n 1 _ <"$rt/ready"; then
  echo "the daemon did not report ready (exited or timed out)"; exit 1
fi

export HEARTH_E2E_CMD="$bin"
export HEARTH_E2E_RUNTIME="$rt"
export HEARTH_E2E_MODEL_PATH="$model"
case "$kind" in
  nvim-system) "$here/run_nvim.sh" system "$here/nvim/test_e2e.lua" ;;
  nvim-current) "$here/run_nvim.sh" current "$here/nvim/test_e2e.lua" ;;
  # Skips (77) when the daemon has no hearth/nextEdit or the model proposes no edit.
  nvim-next-edit) HEARTH_NVIM_TEST_TIMEOUT=180 "$here/run_nvim.sh" current "$here/nvim/test_next_edit_e2e.lua" ;;
  vscode-client)
    [ -d "$repo/plugins/vscode/node_modules" ] || { echo "plugins/vscode/node_modules is missing: run scripts/setup"; exit 1; }
    (cd "$repo/plugins/vscode" && node_modules/.bin/tsc -p .)
    node --test "$here/vscode_client_e2e.test.js"
    ;;
  *) echo "unknown kind $kind"; exit 2 ;;
esac
