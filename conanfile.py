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
    # the opt-in headers' components, as the CMake package's COMPONENTS json fmt yaml
    options = {"with_json": [True, False], "with_fmt": [True, False], "with_yaml": [True, False]}
    default_options = {"with_json": True, "with_fmt": True, "with_yaml": False}
    exports_sources = "include/*", "CMakeLists.txt", "cmake/*", "LICENSE"
    no_copy_source = True

    def requirements(self):
        self.requires("boost/[>=1.71]")
        # opt-in integrations: quota/json.hpp and the *_json.hpp loaders, quota/fmt.hpp,
        # quota/yunikorn_limits_yaml.hpp
        if self.options.with_json:
            self.requires("nlohmann_json/[>=3.9]")
        if self.options.with_fmt:
            self.requires("fmt/[>=9]")
        if self.options.with_yaml:
            self.requires("yaml-cpp/[>=0.7]")

    def layout(self):
        cmake_layout(self)

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", os.path.join(self.source_folder, "include"), os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "quota")
        self.cpp_info.set_property("pkg_config_name", "quota")
        # one component per target of the CMake package: quota::quota (core: Boost only),
        # quota::json, quota::fmt, quota::yaml (each the core plus its library)
        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "quota::quota")
        core.set_property("pkg_config_name", "quota")
        core.requires = ["boost::headers"]
        core.bindirs = []
        core.libdirs = []
        for name, dep, flag in (("json", "nlohmann_json::nlohmann_json", self.options.with_json),
                                ("fmt", "fmt::fmt", self.options.with_fmt),
                                ("yaml", "yaml-cpp::yaml-cpp", self.options.with_yaml)):
            if not flag:
                continue
            c = self.cpp_info.components[name]
            c.set_property("cmake_target_name", f"quota::{name}")
            c.set_property("pkg_config_name", f"quota-{name}")
            c.requires = ["core", dep]
            c.bindirs = []
            c.libdirs = []

    def package_id(self):
        # header-only: one package whatever the settings; the options only choose requirements
        self.info.clear()
