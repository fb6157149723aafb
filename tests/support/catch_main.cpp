// SPDX-License-Identifier: Apache-2.0
// The one translation unit that holds Catch2's runner; every unit test links it.
#if defined(QUOTA_CATCH_V3)
#include <catch2/catch_session.hpp>
int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
#else
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
