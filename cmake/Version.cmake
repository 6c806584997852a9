# ragd --version: the project version (project() in CMakeLists.txt) and, when
# built from a git checkout, `git describe` at build time (not configure time:
# a rebuild after a commit reports the new commit). The ragd_version target
# regenerates <build>/generated/ragd_version.h on every build.
find_package(Git QUIET)
set(RAGD_VERSION_HEADER_DIR ${CMAKE_BINARY_DIR}/generated)
add_custom_target(ragd_version
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DGIT_EXECUTABLE=${GIT_EXECUTABLE}
          -DVERSION=${PROJECT_VERSION} -DOUTPUT=${RAGD_VERSION_HEADER_DIR}/ragd_version.h
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteVersion.cmake
  BYPRODUCTS ${RAGD_VERSION_HEADER_DIR}/ragd_version.h
  VERBATIM)
