# SPDX-License-Identifier: Apache-2.0
from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy
import os


class QuotaConan(ConanFile):
    name = "quota"
    version = "0.1.0"
    license = "Apache-2.0"
    description = "Embeddable header-only C++20 quota engine for cluster schedulers"
    topics = ("scheduler", "quota", "kubernetes", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    exports_sources = "include/*", "CMakeLists.txt", "cmake/*", "LICENSE"
    no_copy_source = True

    def requirements(self):
        self.requires("boost/[>=1.71]")
        # opt-in integrations (quota/json.hpp, quota/fmt.hpp)
        self.requires("fmt/[>=9]")
        self.requires("nlohmann_json/[>=3.9]")

    def layout(self):
        cmake_layout(self)

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", os.path.join(self.source_folder, "include"), os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.set_property("cmake_file_name", "quota")
        self.cpp_info.set_property("cmake_target_name", "quota::quota")
        self.cpp_info.set_property("pkg_config_name", "quota")

    def package_id(self):
        self.info.clear()
