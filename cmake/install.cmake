# What `cmake --install` puts under the prefix (scripts/install: ~/.local; the .deb: /usr):
#   bin/hearth                         the executable; every default path comes from XDG
#   share/hearth/nvim/                 the Neovim plugin (add it to the runtimepath)
#   share/hearth/hearth.vsix           the VS Code extension (code --install-extension)
#   share/man/man1/hearth.1.gz         hearth(1), written from the binary's own --help texts
#   share/hearth/bench/quality/        `hearth bench quality`'s scripts and task list
#   share/hearth/bench/editor/         `hearth bench editor`'s scripts
#   share/hearth/bench/next_edit/      `hearth bench next-edit`'s scripts and task list
#   share/hearth/bench/common/         what the benches import (found beside their own folder)
# and the Debian package CPack builds from the same rules (cpack -G DEB: hearth_<version>_<arch>.deb,
# its run-time dependencies found by dpkg-shlibdeps from the libraries the binary links).
include(GNUInstallDirs)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(HEARTH_MAN_PAGE ${PROJECT_BINARY_DIR}/man/hearth.1.gz)
add_custom_command(
  OUTPUT ${HEARTH_MAN_PAGE}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/cmake/make_man.py $<TARGET_FILE:hearth> ${PROJECT_VERSION}
          ${PROJECT_BINARY_DIR}/man/hearth.1
  # -n: no name or time stamp in the archive, so the same page gives the same bytes.
  COMMAND gzip -9nf ${PROJECT_BINARY_DIR}/man/hearth.1
  DEPENDS hearth ${PROJECT_SOURCE_DIR}/cmake/make_man.py
  COMMENT "Writing hearth(1) from hearth --help"
  VERBATIM)
add_custom_target(hearth_man ALL DEPENDS ${HEARTH_MAN_PAGE})

install(TARGETS hearth RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/plugins/nvim/ DESTINATION ${CMAKE_INSTALL_DATADIR}/hearth/nvim)
if(HEARTH_VSIX)
  install(FILES ${HEARTH_VSIX} DESTINATION ${CMAKE_INSTALL_DATADIR}/hearth)
endif()
install(FILES ${HEARTH_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
foreach(bench quality editor next_edit common)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/bench/${bench}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/hearth/bench/${bench}
          PATTERN "__pycache__" EXCLUDE)
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hearth)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "hearth developers <hearth@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "local coding assistant: inline completion and chat over LSP")
set(CPACK_PACKAGE_DESCRIPTION "One background daemon that editors talk to over the Language Server Protocol, \
running quantized GGUF models on the CPU: fill-in-the-middle completions that reuse each file's KV cache, \
and streamed answers about a selection. Includes the Neovim plugin and the VS Code extension (/usr/share/hearth).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # hearth_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)    # Depends: from the linked libraries (dpkg-shlibdeps)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "neovim")
include(CPack)
