# Install rules for the CMake package `find_package(tessel)` (docs/compile.md):
#   bin/tessel                         the CLI (installed by tools/CMakeLists.txt), imported as tessel::tessel
#   lib/libtessel_runtime.a, lib/libtessel_support.a     exported as tessel::runtime, tessel::support
#   include/tessel/{runtime,support}/  their headers
#   lib/cmake/tessel/                  tesselConfig.cmake (+ version, targets, tessel_add_tuned_kernel)
# The compiler's C++ libraries (codegen, records, ...) are not part of the package yet.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TESSEL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tessel)
set_target_properties(tessel_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(tessel_support PROPERTIES EXPORT_NAME support)
install(TARGETS tessel_runtime tessel_support EXPORT tesselTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessel/runtime ${PROJECT_SOURCE_DIR}/include/tessel/support
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessel)
install(EXPORT tesselTargets NAMESPACE tessel:: DESTINATION ${TESSEL_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tesselConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tesselConfig.cmake INSTALL_DESTINATION ${TESSEL_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tesselConfig.cmake ${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
        DESTINATION ${TESSEL_INSTALL_CMAKEDIR})
