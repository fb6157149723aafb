# SPDX-License-Identifier: Apache-2.0
# quota-sim's replay and models: the quota_sim library (tools/quota-sim/library.cmake).
target_link_libraries(${name} PRIVATE quota_sim_lib)
