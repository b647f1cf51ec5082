# Link dependencies of kvchaos::core. Used by the build and by the installed kvchaosConfig.cmake.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(spdlog REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(ZLIB REQUIRED)
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET GLOBAL hiredis)
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET GLOBAL libisal)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET GLOBAL cpp-httplib)

if(NOT TARGET kvchaos_dep::aio)
  find_path(KVCHAOS_AIO_INCLUDE_DIR libaio.h REQUIRED)
  find_library(KVCHAOS_AIO_LIBRARY aio REQUIRED)
  add_library(kvchaos_dep::aio UNKNOWN IMPORTED GLOBAL)
  set_target_properties(kvchaos_dep::aio PROPERTIES
    IMPORTED_LOCATION "${KVCHAOS_AIO_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${KVCHAOS_AIO_INCLUDE_DIR}")
endif()
