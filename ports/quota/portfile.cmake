# SPDX-License-Identifier: Apache-2.0
# Header-only: configure without tests/examples/tools, install, fix up the config.
vcpkg_from_github(
  OUT_SOURCE_PATH SOURCE_PATH
  REPO quota-engine/quota
  REF "v${VERSION}"
  SHA512 0
  HEAD_REF main)
set(VCPKG_BUILD_TYPE release)
vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS -DQUOTA_BUILD_TESTS=OFF -DQUOTA_BUILD_EXAMPLES=OFF -DQUOTA_BUILD_TOOLS=OFF -DQUOTA_BUILD_BENCH=OFF)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME quota CONFIG_PATH share/cmake/quota)
vcpkg_fixup_pkgconfig()
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug" "${CURRENT_PACKAGES_DIR}/lib")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
