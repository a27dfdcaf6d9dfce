#!/usr/bin/env bash
# The installed hearth works as a tool: `cmake --install` into a temporary prefix, then, as a
# user with nothing but their own XDG folders (a fresh HOME, another working directory, PATH
# holding only the prefix and the system), the installed `hearth` finds its default model,
# config, runtime and log folders there and runs `model info`, `complete` and `lsp`.
#   run_install.sh BUILD_DIR MODEL
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$1" model="$2"
work="$(mktemp -d)"
daemon_pid=""
cleanup() {
  local rc=$?
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null || true
  if [ "$rc" -ne 0 ] && [ -f "$work/home/state/hearth/hearth.log" ]; then
    echo "---- daemon log, last 30 lines"; tail -30 "$work/home/state/hearth/hearth.log"
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/hearth share/hearth/hearth.vsix share/hearth/nvim/lua/hearth/init.lua share/man/man1/hearth.1.gz; do
  [ -f "$prefix/$f" ] || fail "cmake --install did not install $f"
done
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"
# No path into the source or build tree is compiled into the binary.
repo="$(cd "$here/../.." && pwd)" build_abs="$(cd "$build" && pwd)"
for tree in "$repo" "$build_abs"; do
  ! grep -qaF "$tree/" "$prefix/bin/hearth" || fail "the installed binary names $tree"
done

# A user who has only the installed files: nothing points into the source or build tree.
export HOME="$work/home"
export XDG_CACHE_HOME="$HOME/cache" XDG_CONFIG_HOME="$HOME/config" XDG_STATE_HOME="$HOME/state" \
       XDG_RUNTIME_DIR="$work/run"
unset HEARTH_MODEL HEARTH_DEFAULT_MODEL HEARTH_FIXTURES_DIR
export PATH="$prefix/bin:/usr/bin:/bin"
mkdir -p "$XDG_CACHE_HOME/hearth/models" "$XDG_CONFIG_HOME/hearth" "$work/elsewhere"
chmod 700 "$XDG_RUNTIME_DIR" 2>/dev/null || mkdir -m 700 "$XDG_RUNTIME_DIR"
# The default model, as `hearth pull` or scripts/fetch-model leave it: a file and default.gguf.
cp "$model" "$XDG_CACHE_HOME/hearth/models/stories260K.gguf"
ln -s stories260K.gguf "$XDG_CACHE_HOME/hearth/models/default.gguf"
# The tiny model's heads (8 wide) need an f16 KV cache: set in the user's config file.
printf 'cache-type = "f16"\n' >"$XDG_CONFIG_HOME/hearth/config.toml"
cd "$work/elsewhere"

[ "$(command -v hearth)" = "$prefix/bin/hearth" ] || fail "hearth on PATH is $(command -v hearth)"
hearth --version | grep -Eq '^hearth [0-9]+\.[0-9]+\.[0-9]+$' || fail "hearth --version: $(hearth --version)"

info="$(hearth model info)"
grep -q "$XDG_CACHE_HOME/hearth/models/default.gguf" <<<"$info" || fail "model info did not use the XDG default model: $info"
grep -q "llama" <<<"$info" || fail "model info does not name the architecture: $info"
echo "model info: $(head -3 <<<"$info" | tr '\n' ' ')"

printf 'def add(a, b):\n    return \n' >sample.py
out="$(hearth complete -n 8 sample.py:2:12 2>&1)" || fail "hearth complete: $out"
echo "complete: ${out:0:200}"

# The editors' entry: starts a daemon (on the default model, with the config's settings)
# and relays an LSP session to it.
probe="$(/usr/bin/python3 "$here/lsp_probe.py" hearth lsp)" || fail "hearth lsp: $probe"
grep -q "^server hearth " <<<"$probe" || fail "hearth lsp: $probe"
echo "lsp: $probe"
lock="$XDG_RUNTIME_DIR/hearth/hearth.sock.lock"
[ -s "$lock" ] || fail "no daemon lock at $lock: the daemon did not use the XDG runtime folder"
daemon_pid="$(< "$lock")"
kill -0 "$daemon_pid" || fail "the daemon $daemon_pid is not running"
[ -f "$XDG_STATE_HOME/hearth/hearth.log" ] || fail "no daemon log under XDG_STATE_HOME"
kill "$daemon_pid"
for _ in $(seq 100); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$daemon_pid" 2>/dev/null || fail "the daemon did not stop on SIGTERM"
daemon_pid=""

# The manual covers every subcommand the binary lists.
page="$(gzip -dc "$prefix/share/man/man1/hearth.1.gz")"
for sub in $(hearth --help | awk '/^Subcommands:|^SUBCOMMANDS:/ { on = 1; next } on && /^ +[a-z]/ { print $1 }'); do
  grep -q "^\.SS hearth $sub\$" <<<"$page" || fail "the man page has no section for 'hearth $sub'"
done
echo "1 passed, 0 failed"
