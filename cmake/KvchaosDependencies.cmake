# Every dependency comes from the distribution (ci/install-deps.sh installs them).
# The core library's own link dependencies live in KvchaosCoreDependencies.cmake, which is also
# installed so that find_package(kvchaos) finds them again in a consumer project.
include(${CMAKE_CURRENT_LIST_DIR}/KvchaosCoreDependencies.cmake)

if(KVCHAOS_TESTS)
  find_package(GTest REQUIRED)
  find_package(rapidcheck REQUIRED)
endif()
if(KVCHAOS_BENCH)
  find_package(benchmark REQUIRED)
endif()
find_package(CLI11 REQUIRED)
find_package(valijson REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS context)
if(KVCHAOS_FUSE)
  pkg_check_modules(FUSE3 REQUIRED IMPORTED_TARGET fuse3)
endif()
