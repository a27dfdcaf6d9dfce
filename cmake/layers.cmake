# The layer folders' CMake vocabulary, shared by the top-level build and the aarch64 cross
# build of the kernels (tests/neon/cross).
# A layer library is STATIC once it has sources; until then an INTERFACE target keeps
# the dependency graph (and the include rule) in place.
function(hearth_layer_library name)
  if(ARGN)
    add_library(${name} STATIC ${ARGN})
    set(scope PUBLIC)
  else()
    add_library(${name} INTERFACE)
    set(scope INTERFACE)
  endif()
  target_include_directories(${name} ${scope} ${PROJECT_SOURCE_DIR})
  set(HEARTH_SCOPE ${scope} PARENT_SCOPE)
endfunction()

# hearth_include_rule(target FOLDER ALLOW prefix...): before `target` compiles, every file in
# FOLDER (and below) may include project headers only from the ALLOW prefixes; anything else
# fails the build with the file and the include (cmake/check_includes.cmake).
function(hearth_include_rule target folder)
  file(GLOB_RECURSE checked CONFIGURE_DEPENDS ${folder}/*.h ${folder}/*.cpp ${folder}/*.in)
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${target}.includes-checked)
  string(REPLACE ";" "," allow "${ARGN}")  # commas: a `;` would end the shell command
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DFOLDER=${folder} -DROOT=${PROJECT_SOURCE_DIR} "-DALLOW=${allow}"
            -DSTAMP=${stamp} -P ${PROJECT_SOURCE_DIR}/cmake/check_includes.cmake
    DEPENDS ${checked} ${PROJECT_SOURCE_DIR}/cmake/check_includes.cmake
    COMMENT "Checking the include directions of ${target}" VERBATIM)
  add_custom_target(${target}_includes DEPENDS ${stamp})
  add_dependencies(${target} ${target}_includes)
endfunction()
