# jemalloc for the kvchaos tool and the simulator's benchmark, when installed (libjemalloc-dev).
# The simulator allocates on every message it carries (JSON bodies, closures), and jemalloc runs it
# about 20 % faster than glibc's malloc; the node that `kvchaos node` runs gets a server allocator
# too. Never with sanitizers, which bring their own. Trace hashes do not depend on the allocator.
set(KVCHAOS_JEMALLOC "AUTO" CACHE STRING "Link the kvchaos tool and sim_bench with jemalloc: AUTO (when found, without sanitizers), ON or OFF")
set_property(CACHE KVCHAOS_JEMALLOC PROPERTY STRINGS AUTO ON OFF)

set(KVCHAOS_JEMALLOC_LIBRARY "")
if(NOT KVCHAOS_JEMALLOC STREQUAL "OFF")
  find_library(KVCHAOS_JEMALLOC_FOUND NAMES jemalloc)
  string(FIND "${CMAKE_CXX_FLAGS}" "-fsanitize" _kvchaos_flag_sanitizer)
  if(KVCHAOS_SANITIZE OR NOT _kvchaos_flag_sanitizer EQUAL -1)
    if(KVCHAOS_JEMALLOC STREQUAL "ON")
      message(FATAL_ERROR "KVCHAOS_JEMALLOC=ON cannot be used with sanitizers (they replace malloc)")
    endif()
  elseif(KVCHAOS_JEMALLOC_FOUND)
    set(KVCHAOS_JEMALLOC_LIBRARY "${KVCHAOS_JEMALLOC_FOUND}")
  elseif(KVCHAOS_JEMALLOC STREQUAL "ON")
    message(FATAL_ERROR "KVCHAOS_JEMALLOC=ON but jemalloc was not found (apt-get install libjemalloc-dev)")
  endif()
endif()
message(STATUS "kvchaos: jemalloc for the kvchaos tool and sim_bench: ${KVCHAOS_JEMALLOC_LIBRARY}")

# Links `target` with jemalloc when it is in use.
function(kvchaos_link_allocator target)
  if(KVCHAOS_JEMALLOC_LIBRARY)
    target_link_libraries(${target} PRIVATE "${KVCHAOS_JEMALLOC_LIBRARY}")
  endif()
endfunction()
