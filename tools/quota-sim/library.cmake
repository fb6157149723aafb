# quota-sim's replay loop and its models, compiled once as a static library
# that quota-sim, the simulator tests, the trace tests, the fuzz harnesses and
# the benchmarks link (included from the top-level CMakeLists.txt). The
# scenario loader and the openb importer stay header-only: the fuzz harnesses
# compile them with libFuzzer's coverage instrumentation.
set(QUOTA_SIM_DIR ${CMAKE_CURRENT_LIST_DIR})
set(QUOTA_SIM_SOURCES
  ${QUOTA_SIM_DIR}/simulator.cpp
  ${QUOTA_SIM_DIR}/models.cpp
  ${QUOTA_SIM_DIR}/models/claims.cpp
  ${QUOTA_SIM_DIR}/models/elastic_quota.cpp
  ${QUOTA_SIM_DIR}/models/extra.cpp
  ${QUOTA_SIM_DIR}/models/fair_share.cpp
  ${QUOTA_SIM_DIR}/models/kueue.cpp
  ${QUOTA_SIM_DIR}/models/limits.cpp
  ${QUOTA_SIM_DIR}/models/volcano.cpp)

# YAML scenarios (.yaml/.yml) when yaml-cpp is there (opt-in)
find_package(yaml-cpp QUIET)

# quota_sim_library(NAME): one build of the library; the trace replay test
# links a second one, optimised (tests/trace/CMakeLists.txt).
function(quota_sim_library name)
  add_library(${name} STATIC EXCLUDE_FROM_ALL ${QUOTA_SIM_SOURCES})
  # one translation unit: parsing the headers costs more than the code each file
  # adds (nine separate files took twice the time of one)
  set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  target_include_directories(${name} PUBLIC ${QUOTA_SIM_DIR})
  target_link_libraries(${name} PUBLIC quota::quota fmt::fmt nlohmann_json::nlohmann_json PRIVATE quota_warnings)
  if(yaml-cpp_FOUND)
    target_link_libraries(${name} PUBLIC yaml-cpp)
    target_compile_definitions(${name} PUBLIC QUOTA_SIM_HAVE_YAML)
  endif()
endfunction()

quota_sim_library(quota_sim_lib)
