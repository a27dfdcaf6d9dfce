#!/usr/bin/env bash
# The real-editor test: the packaged extension in VS Code (code-server) in Debian's headless
# Chromium, against the real daemon and the default model.
#   run_vscode_real.sh HEARTH_BINARY VSIX
#   run_vscode_real.sh --fake VSIX      the editor side alone: the scripted server
#                                       (fake_server.js, through vscode_real/fake_hearth.sh)
#                                       stands in for hearth; no model; vscode_real/next_edit.mjs
#   run_vscode_real.sh HEARTH_BINARY VSIX --next-edit
#                                       next edits from the daemon and the default model
#                                       (vscode_real/next_edit.mjs; 77: no edit proposed)
# As a new user has it: a private HOME and XDG tree with nothing but the default model
# downloaded (<cache>/hearth/models/default.gguf, a link to the default model), `hearth`
# on PATH, hearth.daemonPath and hearth.modelPath unset, a runtime directory of mode 700.
# The daemon's config file sets only `threads = 2`, a generous completion time budget (a
# busy machine must not turn a slow answer into none) and short chat answers (48 tokens).
# vscode_real/drive.mjs does the rest.
# Environment: HEARTH_VSCODE_BURSTS (typing bursts to time, default 3), HEARTH_VSCODE_OUT
# (a folder for the screenshot and the timings; default: none kept).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
fake=""
if [ "$1" = "--fake" ]; then fake=1; bin="$here/vscode_real/fake_hearth.sh"; else bin="$(realpath "$1")"; fi
vsix="$(realpath "$2")"
drive="$here/vscode_real/drive.mjs"
if [ -n "$fake" ] || [ "${3:-}" = "--next-edit" ]; then drive="$here/vscode_real/next_edit.mjs"; fi
export HEARTH_VSCODE_FAKE="${fake:-0}"
# shellcheck source=vscode_real/versions.sh
. "$here/vscode_real/versions.sh"
[ -x "$bin" ] || { echo "hearth binary not found: $bin"; exit 1; }
[ -f "$vsix" ] || { echo "the packaged extension is missing: $vsix (plugins_vscode_package builds it)"; exit 1; }
# $HEARTH_DEFAULT_MODEL (scripts/test sets it), else where hearth finds the default model.
model="${HEARTH_DEFAULT_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth/models/default.gguf}"
if [ -n "$fake" ]; then model=/dev/null
else
  [ -f "$model" ] || { echo "no default model at '$model' (scripts/fetch-model downloads it)"; exit 1; }
  model="$(realpath "$model")"
fi
code_server="$vscode_test_code_server/bin/code-server"
for need in "$vscode_test_node/bin/node" "$code_server" "$vscode_test_chromium" "$here/vscode_real/node_modules/playwright-core"; do
  [ -e "$need" ] || { echo "missing $need: run scripts/setup"; exit 1; }
done

tree="$(mktemp -d)"
cs_pid=""
cleanup() {
  local rc=$?
  if [ -n "$cs_pid" ]; then kill -- "-$cs_pid" 2>/dev/null || kill "$cs_pid" 2>/dev/null || true; fi
  local lock="$tree/run/hearth/hearth.sock.lock" pid=""
  [ -f "$lock" ] && pid="$(tr -dc 0-9 <"$lock")"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ -n "${HEARTH_VSCODE_OUT:-}" ]; then
    mkdir -p "$HEARTH_VSCODE_OUT/logs"
    cp "$tree/state/hearth/hearth.log" "$tree/code-server.log" "$HEARTH_VSCODE_OUT/logs/" 2>/dev/null || true
    n=0
    for f in $(find "$tree/user/logs" -path '*hearth*' -name '*.log' -type f 2>/dev/null); do
      n=$((n + 1)); cp "$f" "$HEARTH_VSCODE_OUT/logs/extension-output-$n.log"
    done
  fi
  if [ "$rc" -ne 0 ]; then
    # The extension's output channel (stderr of hearth lsp among it) is a file in the logs.
    for log in "$tree/state/hearth/hearth.log" "$tree/code-server.log" $(find "$tree/user/logs" -name '*hearth*' -type f 2>/dev/null); do
      [ -f "$log" ] && { echo "---- $log, last 40 lines"; tail -40 "$log"; }
    done
  fi
  rm -rf "$tree"
  exit "$rc"
}
trap cleanup EXIT

mkdir -p "$tree/home/.local/bin" "$tree/cache/hearth/models" "$tree/config/hearth" "$tree/state" "$tree/data" \
  "$tree/work" "$tree/user/User" "$tree/extensions"
mkdir -m 700 "$tree/run"
mkdir -m 755 "$tree/open-run"   # for the start that must fail: others may enter it
[ -n "$fake" ] || ln -s "$model" "$tree/cache/hearth/models/default.gguf"
# On PATH as a user install has it: VS Code takes the extension host's PATH from a login
# shell, whose ~/.profile adds ~/.local/bin (as Debian's default one does).
ln -s "$bin" "$tree/home/.local/bin/hearth"
printf 'PATH="$HOME/.local/bin:$PATH"\n' >"$tree/home/.profile"
cat >"$tree/config/hearth/config.toml" <<'TOML'
threads = 2
[completion]
time-budget-ms = 20000
[chat]
max-tokens = 48
TOML
# No popup may cover the ghost text: quick suggestions and word-based suggestions off. No
# auto-indent or auto-closing either, so that the test knows what each key typed.
cat >"$tree/user/User/settings.json" <<'JSON'
{
  "editor.inlineSuggest.enabled": true,
  "editor.quickSuggestions": { "other": false, "comments": false, "strings": false },
  "editor.wordBasedSuggestions": "off",
  "editor.suggestOnTriggerCharacters": false,
  "editor.minimap.enabled": false,
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.disableAIFeatures": true,
  "workbench.tips.enabled": false,
  "extensions.ignoreRecommendations": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "files.autoSave": "off",
  "editor.autoIndent": "none",
  "editor.autoClosingBrackets": "never",
  "editor.autoClosingQuotes": "never"
}
JSON
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$port" >"$tree/code-server.yaml"

export HOME="$tree/home" XDG_CACHE_HOME="$tree/cache" XDG_CONFIG_HOME="$tree/config" XDG_STATE_HOME="$tree/state"
export XDG_DATA_HOME="$tree/data" XDG_RUNTIME_DIR="$tree/run" PATH="$tree/home/.local/bin:$vscode_test_node/bin:$PATH"
unset HEARTH_MODEL
# The scripted server logs what it receives here (the extension host passes it on).
export FAKE_LOG_FILE="$tree/fake-server.jsonl"
cs_args=(--config "$tree/code-server.yaml" --user-data-dir "$tree/user" --extensions-dir "$tree/extensions")
"$code_server" "${cs_args[@]}" --install-extension "$vsix" >"$tree/install.log" 2>&1 ||
  { cat "$tree/install.log"; exit 1; }
setsid "$code_server" "${cs_args[@]}" --disable-telemetry --disable-update-check --disable-workspace-trust \
  "$tree/work" >"$tree/code-server.log" 2>&1 &
cs_pid=$!

export HEARTH_VSCODE_URL="http://127.0.0.1:$port/" HEARTH_VSCODE_TREE="$tree" HEARTH_VSCODE_CHROMIUM="$vscode_test_chromium"
export HEARTH_VSCODE_MODEL_PATH="$tree/cache/hearth/models/default.gguf"
# HEARTH_VSCODE_TESTS: a pattern of test names to run (the others are skipped).
timeout "${HEARTH_VSCODE_TIMEOUT:-900}" node ${HEARTH_VSCODE_TESTS:+--test-name-pattern="$HEARTH_VSCODE_TESTS"} \
  "$drive"
