include(${CMAKE_CURRENT_LIST_DIR}/KvchaosPch.cmake)

# kvchaos_set_warnings(target): the warning set every first-party target uses.
function(kvchaos_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wnon-virtual-dtor
      -Wimplicit-fallthrough -Wno-missing-field-initializers>)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wshadow=local>)
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    # Checks the GUARDED_BY / REQUIRES annotations of core/common/thread_annotations.h.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wthread-safety>)
  endif()
  if(KVCHAOS_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
  # Every first-party target passes here, so this is also where it gets the precompiled headers.
  kvchaos_precompile_headers(${target})
endfunction()
