# kvchaos_add_libc_preload(target source.c): an LD_PRELOAD library in C with nothing but libc and
# libdl. Never sanitized: it loads before a sanitizer's runtime. Exports only what it defines
# visible (the functions it replaces).
function(kvchaos_add_libc_preload target source)
  add_library(${target} SHARED ${source})
  set_target_properties(${target} PROPERTIES C_STANDARD 11 C_EXTENSIONS ON C_VISIBILITY_PRESET hidden)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -fno-sanitize=all
    $<$<BOOL:${KVCHAOS_WERROR}>:-Werror>)
  target_link_options(${target} PRIVATE -fno-sanitize=all)
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS})
endfunction()
