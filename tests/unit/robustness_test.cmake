# SPDX-License-Identifier: Apache-2.0
# robustness_test loads scenarios through quota-sim (the quota_sim library, tools/quota-sim/CMakeLists.txt).
target_link_libraries(${name} PRIVATE quota_sim_lib)
