#!/usr/bin/env bash
# A stand-in for the hearth binary in the real VS Code test of the editor side alone:
# `hearth lsp --help` lists no flags, and `hearth lsp ...` is the scripted server
# (fake_server.js), which answers by fixed rules and logs to $FAKE_LOG_FILE.
here="$(dirname "$(realpath "${BASH_SOURCE[0]}")")"
for a in "$@"; do
  if [ "$a" = "--help" ]; then echo "usage: hearth lsp (the scripted server of the plugin tests)"; exit 0; fi
done
exec node "$here/../fake_server.js"
