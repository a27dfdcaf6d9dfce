#!/usr/bin/env bash
# The Debian package: built with CPack from the install rules, installed with dpkg -i, its
# `hearth --version` and `hearth model info` run as a user would (from /, nothing but the
# package on the PATH), then removed with dpkg -r, leaving none of its files behind.
#   run_deb.sh BUILD_DIR MODEL
# It changes the machine's package database, so it refuses (skips, exit 77) wherever that
# could touch something it did not put there: not root, a hearth package already installed,
# or any file of the package already present. One run at a time per machine (a lock in
# /run/lock); a failed run still removes what it installed.
set -euo pipefail
build="$1" model="$2"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "installing a .deb needs root (CI runs as root)"
command -v dpkg-shlibdeps >/dev/null || fail "dpkg-shlibdeps is missing (dpkg-dev): run scripts/setup"

work="$(mktemp -d)"
installed=0
cleanup() {
  local rc=$?
  if ((installed)); then dpkg -r hearth >/dev/null 2>&1 || echo "could not remove the hearth package"; fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
mkdir -p /run/lock
exec 9>/run/lock/hearth-deb-test.lock
flock -w 600 9 || fail "another run of this test holds /run/lock/hearth-deb-test.lock"

state="$(dpkg-query -W -f='${Status}' hearth 2>/dev/null || true)"
case "$state" in ""|*not-installed) ;; *) skip "a hearth package is on this machine ($state); not touching it" ;; esac

cpack --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack failed"; }
debs=("$work"/pkg/hearth_*_*.deb)
[ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ] || fail "expected one hearth_<version>_<arch>.deb, got: $(ls "$work/pkg")"
deb="${debs[0]}"
version="$(dpkg-deb -f "$deb" Version)" arch="$(dpkg-deb -f "$deb" Architecture)"
[ "$(basename "$deb")" = "hearth_${version}_${arch}.deb" ] || fail "file name $(basename "$deb") is not hearth_${version}_${arch}.deb"
depends="$(dpkg-deb -f "$deb" Depends)"
echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"
echo "Depends: $depends"
# The run-time libraries the binary links, as dpkg-shlibdeps found them.
for lib in libc6 libstdc++6 libcurl4 libzip4 libssl3 libboost-json1.81.0 libspdlog; do
  grep -q "$lib" <<<"$depends" || fail "Depends does not name $lib"
done

# Every path the package holds; none may exist before (so dpkg -r cannot take a user's file).
mapfile -t files < <(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }')
((${#files[@]} > 3)) || fail "the package holds only: ${files[*]}"
for f in "${files[@]}"; do [ ! -e "$f" ] || skip "$f already exists on this machine; not installing over it"; done
for want in /usr/bin/hearth /usr/share/hearth/hearth.vsix /usr/share/hearth/nvim/lua/hearth/init.lua /usr/share/man/man1/hearth.1.gz; do
  printf '%s\n' "${files[@]}" | grep -qx "$want" || fail "the package does not hold $want"
done

# dpkg -i does not wait for another dpkg or apt run to finish; retry while one holds the lock.
installed=1
for i in $(seq 60); do
  if dpkg -i "$deb" >"$work/dpkg.log" 2>&1; then break; fi
  grep -q "lock" "$work/dpkg.log" && [ "$i" -lt 60 ] || { cat "$work/dpkg.log"; fail "dpkg -i failed"; }
  sleep 2
done
[ "$(dpkg-query -W -f='${Status}' hearth)" = "install ok installed" ] || fail "dpkg -i left: $(dpkg-query -W -f='${Status}' hearth)"

mkdir -p "$work/home"
cp "$model" "$work/home/tiny.gguf"
as_user() { (cd / && env -i HOME="$work/home" PATH=/usr/bin:/bin "$@"); }
out="$(as_user hearth --version)"
[ "$out" = "hearth $version" ] || fail "hearth --version printed '$out', the package is $version"
echo "installed: $out"
info="$(as_user hearth model info "$work/home/tiny.gguf")" || fail "hearth model info: $info"
grep -q "llama" <<<"$info" || fail "hearth model info: $info"
echo "model info: $(head -2 <<<"$info" | tr '\n' ' ')"

dpkg -r hearth >"$work/dpkg-r.log" 2>&1 || { cat "$work/dpkg-r.log"; fail "dpkg -r failed"; }
installed=0
state="$(dpkg-query -W -f='${Status}' hearth 2>/dev/null || true)"
case "$state" in ""|*not-installed) ;; *) fail "after dpkg -r the package is '$state'" ;; esac
for f in "${files[@]}"; do [ ! -e "$f" ] || fail "$f is still there after dpkg -r"; done
[ ! -e /usr/share/hearth ] || fail "/usr/share/hearth is still there after dpkg -r"
echo "1 passed, 0 failed"
