// SPDX-License-Identifier: Apache-2.0
// A stranger's program: uses the installed/embedded quota library.
#include <quota/quota.hpp>

#include <cstdio>

int main() {
  quota::resource_registry reg;
  const quota::resource_vector request{{quota::resources::nvidia_gpu, 2}};
  const quota::limit_vector max{{quota::resources::nvidia_gpu, quota::parse_amount("4", 0)}};
  const bool ok = quota::fits(request, max);
  std::printf("quota %s: fits=%d (%s)\n", quota::version_string, ok ? 1 : 0,
              std::string(reg.name(quota::resources::nvidia_gpu)).c_str());
  return ok ? 0 : 1;
}
