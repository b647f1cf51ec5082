# kvchaos_precompile_headers(target): with KVCHAOS_PCH (the fuzz preset), the heavy third-party
# headers are parsed once: about a third of the CPU time of a clang ASan build of the core
# (4 min 15 s without, 3 min with, on 2 cores). Precompiled for kvchaos_common_objs and reused by
# every library of the build (same flags); executables (-fPIE) have a source or two each and go
# without.
function(kvchaos_precompile_headers target)
  if(NOT KVCHAOS_PCH)
    return()
  endif()
  get_target_property(type ${target} TYPE)
  if(target STREQUAL "kvchaos_common_objs")
    target_precompile_headers(${target} PRIVATE
      <nlohmann/json.hpp> <spdlog/spdlog.h> <yaml-cpp/yaml.h> <functional> <map> <memory> <string> <vector>)
  elseif(NOT type STREQUAL "EXECUTABLE")
    target_precompile_headers(${target} REUSE_FROM kvchaos_common_objs)
  else()
    return()
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    # Without a timestamp in the .pch its bytes depend only on its input, so ccache can cache the
    # sources that use it (with CCACHE_SLOPPINESS=pch_defines,time_macros: ci/test.sh sets it).
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-Xclang -fno-pch-timestamp>")
  endif()
endfunction()
