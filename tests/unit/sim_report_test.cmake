# SPDX-License-Identifier: Apache-2.0
# The report of quota-sim: the quota_sim library (tools/quota-sim/CMakeLists.txt).
target_link_libraries(${name} PRIVATE quota_sim_lib)
