// SPDX-License-Identifier: Apache-2.0
// Fuzz: the openb CSV importer (tools/quota-sim/openb.hpp).
// The input is split at the first 0x00 byte (or "\n\n") into the node table
// and the pod table, written to temporary files and imported.
// Properties: malformed CSV gives parse_error / validation_error only; an
// accepted import is a scenario the loader accepts.
#include <unistd.h>

#include <fstream>

#include "openb.hpp"
#include "scenario.hpp"

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quota;
  if (size > 1 << 14) return 0;
  const std::string_view in = fuzz::as_text(data, size);
  std::size_t cut = in.find('\0');
  std::size_t skip = 1;
  if (cut == std::string_view::npos) {
    cut = in.find("\n\n");
    skip = 2;
  }
  if (cut == std::string_view::npos) return 0;
  static const std::string base = "/tmp/quota-openb-fuzz-" + std::to_string(::getpid());
  sim::openb_options o;
  o.nodes_file = base + "-nodes.csv";
  o.pods_file = base + "-pods.csv";
  std::ofstream(o.nodes_file, std::ios::binary) << in.substr(0, cut);
  std::ofstream(o.pods_file, std::ios::binary) << in.substr(cut + skip);
  o.tenant_rule = size % 2 ? "qos" : "hash";
  json sc;
  if (!fuzz::typed([&] { sc = sim::import_openb(o); })) return 0;
  try {
    (void)sim::load_scenario(sc);
  } catch (const quota::error& e) {
    fuzz::fail(std::string("the importer wrote a scenario the loader rejects: ") + e.what());
  }
  return 0;
}
