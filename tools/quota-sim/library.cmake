# SPDX-License-Identifier: Apache-2.0
# quota-sim's replay loop and its models, compiled once as a static library
# that quota-sim, the simulator tests, the trace tests, the fuzz harnesses and
# the benchmarks link (included from the top-level CMakeLists.txt). The
# scenario loader and the openb importer stay header-only: the fuzz harnesses
# compile them with libFuzzer's coverage instrumentation.
set(QUOTA_SIM_DIR ${CMAKE_CURRENT_LIST_DIR})
# simulator.cpp: the replay loop; models.cpp: the registry, with every model of
# models/*.hpp
set(QUOTA_SIM_SOURCES ${QUOTA_SIM_DIR}/simulator.cpp ${QUOTA_SIM_DIR}/models.cpp)

# YAML scenarios (.yaml/.yml) when yaml-cpp is there (opt-in)
find_package(yaml-cpp QUIET)

# quota_sim_library(NAME): one build of the library; the trace replay test
# links a second one, optimised (tests/trace/CMakeLists.txt).
function(quota_sim_library name)
  add_library(${name} STATIC EXCLUDE_FROM_ALL ${QUOTA_SIM_SOURCES})
  # one translation unit: parsing the headers costs more than the code each file
  # adds (the replay and the models split over nine files took 168 s of CPU to
  # compile, against 69 s as one)
  set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  target_include_directories(${name} PUBLIC ${QUOTA_SIM_DIR})
  target_link_libraries(${name} PUBLIC quota::quota fmt::fmt nlohmann_json::nlohmann_json PRIVATE quota_warnings)
  if(yaml-cpp_FOUND)
    target_link_libraries(${name} PUBLIC yaml-cpp)
    target_compile_definitions(${name} PUBLIC QUOTA_SIM_HAVE_YAML)
  endif()
endfunction()

quota_sim_library(quota_sim_lib)
