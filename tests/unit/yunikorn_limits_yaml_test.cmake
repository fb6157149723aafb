# SPDX-License-Identifier: Apache-2.0
# yunikorn_limits_yaml_test reads YuniKorn queues.yaml through yaml-cpp (opt-in header quota/yunikorn_limits_yaml.hpp;
# yaml-cpp is found by the top-level CMakeLists.txt, and without it this test is skipped).
target_link_libraries(yunikorn_limits_yaml_test PRIVATE yaml-cpp)
