# SPDX-License-Identifier: Apache-2.0
# limits_yaml_test reads YuniKorn queues.yaml through yaml-cpp (opt-in header quota/limits_yaml.hpp).
find_package(yaml-cpp REQUIRED)
target_link_libraries(limits_yaml_test PRIVATE yaml-cpp)
