# What `cmake --install` adds beyond the targets (each target installs itself beside its
# definition): the public headers, the tool-description templates, the CMake package that
# lets a plugin be built out of tree, and the Debian package.
#
#   <prefix>/bin/cordon, cordon-inspector
#   <prefix>/<libdir>/libcordon-core.so*, <libdir>/cordon/plugins/cordon-backend-*.so
#   <prefix>/<libexecdir>/cordon/cordon-init, cordon-ns-spawner, cordon-sh-preload.so,
#     cordon-gvisor-stat.so
#   <prefix>/<datadir>/cordon/prompts/     (reference copy: the binaries have them built in)
#   <prefix>/<includedir>/cordon/
#   <prefix>/<libdir>/cmake/cordon/        (find_package(cordon) -> cordon::core,
#                                            cordon::plugin_abi)
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/cordon
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The templates and their manifest only: prompts/ also holds their renderer's sources.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/prompts/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/cordon/prompts
  FILES_MATCHING PATTERN "v*.json" PATTERN "manifest.txt")

set(cordon_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cordon)
install(EXPORT cordonTargets NAMESPACE cordon:: DESTINATION ${cordon_cmake_dir})
# Relative to the package's own folder, so a moved prefix still says where its plugins go.
set(CORDON_PACKAGE_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/cordon/plugins)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cordonConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/cordonConfig.cmake
  INSTALL_DESTINATION ${cordon_cmake_dir}
  PATH_VARS CORDON_PACKAGE_PLUGIN_DIR)
# 0.x: a minor release may change the plugin ABI, so only the same minor is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cordonConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cordonConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/cordonConfigVersion.cmake
  DESTINATION ${cordon_cmake_dir})

# --- cpack -G DEB (tests/install/deb_test.sh) ---
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cordon)
set(CPACK_PACKAGE_VENDOR cordon)
set(CPACK_PACKAGE_CONTACT "cordon maintainers <cordon@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Run untrusted code in a sandbox (namespaces, containers)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# Library dependencies from what the binaries link (dpkg-shlibdeps): libc6, libseccomp2,
# libsqlite3-0, libstdc++6, and Qt 6 for cordon-inspector. What is run, not linked:
# python3 runs .py code and most tool calls; runc or podman back the container backend.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/lib)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "runc, runsc, podman")
# Stripped: a Debug build's binaries are ten times the size, and nothing in the package
# reads its own debug information.
set(CPACK_STRIP_FILES ON)
include(CPack)
