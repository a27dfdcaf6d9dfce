#!/usr/bin/env bash
# The VS Code extension's checks: unit (compile + node --test on the compiled tests) and
# package (a .vsix with @vscode/vsce into the build folder). Needs plugins/vscode/node_modules
# (scripts/setup runs npm ci there).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ext="$(cd "$here/../../plugins/vscode" && pwd)"
cd "$ext"
[ -d node_modules ] || { echo "plugins/vscode/node_modules is missing: run scripts/setup"; exit 1; }
case "$1" in
  unit)
    node_modules/.bin/tsc -p .
    exec node --test out/test/*.test.js
    ;;
  package)
    node_modules/.bin/tsc -p .
    out="$2/hearth.vsix"
    node_modules/.bin/vsce package --allow-missing-repository --out "$out"
    # The package holds the entry point and the client library, and no tests or sources.
    listing="$(unzip -l "$out")"
    grep -q 'extension/out/src/extension.js' <<<"$listing"
    grep -q 'extension/node_modules/vscode-languageclient/package.json' <<<"$listing"
    if grep -q -e 'extension/src/' -e 'extension/out/test/' <<<"$listing"; then
      echo "the package holds sources or tests"; exit 1
    fi
    # Every hearth.<setting> the docs and scripts/run tell a user to set ("set hearth.X", a row
    # of a settings table) is one the extension has.
    repo="$(cd ../.. && pwd)"
    declared="$(node -e 'console.log(Object.keys(require("./package.json").contributes.configuration.properties).join("\n"))')"
    # Dotted names (hearth.nextEdit.enabled) whole.
    for name in $(grep -ohE 'set `?hearth(\.[A-Za-z]+)+|^\| `hearth(\.[A-Za-z]+)+`' "$repo/scripts/run" "$repo/README.md" "$repo/docs/editors.md" |
                  grep -oE 'hearth(\.[A-Za-z]+)+' | sort -u); do
      if ! grep -qx "$name" <<<"$declared"; then
        echo "the extension has no setting $name (named in scripts/run, README.md or docs/editors.md)"; exit 1
      fi
    done
    echo "2 passed, 0 failed"
    ;;
  *) echo "usage: run_vscode.sh unit|package BUILD_DIR"; exit 2 ;;
esac
