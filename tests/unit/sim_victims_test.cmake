# quota-sim's Volcano capacity adapter (tools/quota-sim/models/volcano.hpp), with the
# quota_sim library (tools/quota-sim/library.cmake) for what it declares.
target_link_libraries(${name} PRIVATE quota_sim_lib)
