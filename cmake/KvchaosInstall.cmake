# `cmake --install` puts kvchaos::core, its headers and a CMake package under the prefix, so a
# service can find_package(kvchaos) and link kvchaos::core (examples/consumer shows it).
include(CMakePackageConfigHelpers)

install(TARGETS kvchaos_core EXPORT kvchaosTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kvchaos)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kvchaos
  FILES_MATCHING PATTERN "*.h"
  PATTERN "tests" EXCLUDE PATTERN "cuda" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/generated/core/common/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kvchaos/core/common)
if(TARGET kvchaos)
  install(TARGETS kvchaos RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(KVCHAOS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kvchaos)
install(EXPORT kvchaosTargets NAMESPACE kvchaos:: DESTINATION ${KVCHAOS_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kvchaosConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kvchaosConfig.cmake INSTALL_DESTINATION ${KVCHAOS_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kvchaosConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/kvchaosConfig.cmake
  ${PROJECT_BINARY_DIR}/kvchaosConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/KvchaosCoreDependencies.cmake
  DESTINATION ${KVCHAOS_CMAKE_DIR})
