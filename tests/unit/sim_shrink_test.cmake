# quota-sim's headers (tools/quota-sim) are header-only: the test includes them directly.
target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tools/quota-sim)
