#!/usr/bin/env bash
# Screenshot of ghost text in Neovim, for docs/editors.md: runs Neovim in tmux with the
# plugin, types into a file until a suggestion shows, and captures the screen as text
# (OUT.txt), with colours (OUT.ansi) and, when Pillow is importable by PYTHON, as OUT.png.
#   screenshot_nvim.sh NVIM OUT_BASENAME -- HEARTH_CMD...      (e.g. -- hearth lsp --runtime-dir D --no-start)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
nvim="$1" out="$2"; shift 2
[ "$1" = "--" ] && shift
work="$(mktemp -d)"
session="hearth-shot"
# A private tmux server: nothing of the user's (or anyone's) sessions is touched.
tmux() { command tmux -L "hearth-shot-$$" "$@"; }
trap 'tmux kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/shapes.py" <<'PY'
import math


def circle_area(r):
    return math.pi * r * r

PY
lua_cmd="$(printf "'%s'," "$@")"
cat >"$work/init.lua" <<LUA
vim.opt.runtimepath:prepend('$repo/plugins/nvim')
vim.o.number = true
vim.o.termguicolors = true
vim.cmd('syntax on')
require('hearth').setup({ cmd = { ${lua_cmd%,} }, debounce_ms = 50 })
LUA
tmux new-session -d -s "$session" -x 92 -y 14 \
  "env XDG_STATE_HOME=$work/state XDG_DATA_HOME=$work/data $nvim -u $work/init.lua -i NONE -n $work/shapes.py"
for _ in $(seq 1 150); do   # Neovim's first screen (slow on a loaded machine)
  sleep 0.2
  tmux capture-pane -t "$session" -p | grep -q 'circle_area' && break
done
sleep 3   # the language client starts after the first screen
tmux send-keys -t "$session" 'G' 'o' 'def rectangle_area(w, h):' Enter
for _ in $(seq 1 300); do
  sleep 0.2
  # Done when something shows below the typed line: the ghost text (virtual lines).
  if tmux capture-pane -t "$session" -p | grep -A1 'def rectangle_area' | tail -1 | grep -q '[a-z]'; then break; fi
done
sleep 0.3
tmux capture-pane -t "$session" -p >"$out.txt"
tmux capture-pane -t "$session" -e -p >"$out.ansi"
cursor="$(tmux display -t "$session" -p '#{cursor_y},#{cursor_x}')"
cat "$out.txt"
if "${PYTHON:-python3}" -c 'import PIL' 2>/dev/null; then
  "${PYTHON:-python3}" "$here/ansi_to_png.py" "$out.ansi" "$out.png" --cursor "$cursor"
  echo "wrote $out.png"
fi
