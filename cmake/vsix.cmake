# hearth_vsix: the VS Code extension packaged as ${HEARTH_VSIX} (compiled with the
# TypeScript and @vscode/vsce that scripts/setup's `npm ci` put in plugins/vscode/node_modules).
# Part of the default build, so `cmake --install` finds it; rebuilt only when the extension changes.
option(HEARTH_VSIX "Package the VS Code extension (needs node and scripts/setup's npm ci)" ON)
if(NOT HEARTH_VSIX)
  return()
endif()
set(vsix_src ${PROJECT_SOURCE_DIR}/plugins/vscode)
set(HEARTH_VSIX ${PROJECT_BINARY_DIR}/plugins/vscode/hearth.vsix)
file(GLOB_RECURSE vsix_inputs CONFIGURE_DEPENDS ${vsix_src}/src/*.ts)
list(APPEND vsix_inputs ${vsix_src}/package.json ${vsix_src}/package-lock.json ${vsix_src}/tsconfig.json
     ${vsix_src}/README.md ${vsix_src}/LICENSE)
add_custom_command(
  OUTPUT ${HEARTH_VSIX}
  COMMAND sh -c "test -x node_modules/.bin/vsce || { echo 'plugins/vscode/node_modules is missing: run scripts/setup' >&2; exit 1; }"
  COMMAND node_modules/.bin/tsc -p .
  COMMAND node_modules/.bin/vsce package --allow-missing-repository --out ${HEARTH_VSIX}
  WORKING_DIRECTORY ${vsix_src}
  DEPENDS ${vsix_inputs}
  COMMENT "Packaging the VS Code extension (plugins/vscode -> hearth.vsix)"
  VERBATIM)
add_custom_target(hearth_vsix ALL DEPENDS ${HEARTH_VSIX})
