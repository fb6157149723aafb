# SPDX-License-Identifier: Apache-2.0
# quota-sim as a host of the optional capabilities: the quota_sim library (tools/quota-sim/CMakeLists.txt).
target_link_libraries(${name} PRIVATE quota_sim_lib)
