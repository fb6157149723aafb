# SPDX-License-Identifier: Apache-2.0
# quota-sim's Volcano capacity adapter (tools/quota-sim/models/volcano_capacity.hpp): the
# include directory and dependencies of the quota_sim library (tools/quota-sim/library.cmake).
target_link_libraries(${name} PRIVATE quota_sim_lib)
