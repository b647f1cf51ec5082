# Version and build id baked into the binaries: results and reports record which build made them.
find_package(Git QUIET)
set(KVCHAOS_BUILD_ID "unknown")
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE _sha
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _sha)
    set(KVCHAOS_BUILD_ID ${_sha})
  endif()
endif()
configure_file(${PROJECT_SOURCE_DIR}/core/common/version.h.in
  ${PROJECT_BINARY_DIR}/generated/core/common/version.h @ONLY)
