// Fuzz target: the scenario loader (harness/scenario_loader.h) on any text. A scenario that loads
// must load again from the same text with the same hash (the loader is a pure function of it).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "harness/scenario_hash.h"
#include "harness/scenario_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto first = kvchaos::harness::ParseScenario(text, "fuzz.yaml");
  if (!first.ok()) {
    FUZZ_CHECK(!first.status().message().empty(), "a refused scenario must say why");
    return 0;
  }
  auto again = kvchaos::harness::ParseScenario(text, "fuzz.yaml");
  FUZZ_CHECK(again.ok(), "a scenario loaded once and then not: " + again.status().ToString());
  FUZZ_CHECK(kvchaos::harness::ScenarioHash(*first) == kvchaos::harness::ScenarioHash(*again),
             "the same text loaded into two different scenarios");
  return 0;
}
