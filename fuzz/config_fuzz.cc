// Fuzz target: the YAML config reader (core/common/config_reader.h) through all three typed
// readers that sit on it: the store config, the node config and faultfs's rules file, each on the
// same text. Each must either accept it or refuse it naming a problem; never crash, hang or
// exhaust memory (the document check bounds aliases, depth and keys first).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/config_reader.h"
#include "core/service/node_config.h"
#include "core/store/store_config.h"
#include "faultfs/rule_parser.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto refused_with_reason = [](const kvchaos::Status& s) { return s.ok() || !s.message().empty(); };
  auto store = kvchaos::store::ParseStoreConfig(text, "store.yaml");
  FUZZ_CHECK(refused_with_reason(store.status()), "store config refused without a reason");
  if (store.ok()) {
    // What the reader accepted, validation accepts again (the reader applies the same rules).
    kvchaos::store::PosixStoreConfig copy = *store;
    FUZZ_CHECK(copy.NormalizeAndValidate().ok(), "an accepted store config fails its own validation");
  }
  auto node = kvchaos::service::ParseNodeConfig(text, "node.yaml");
  FUZZ_CHECK(refused_with_reason(node.status()), "node config refused without a reason");
  auto rules = kvchaos::faultfs::ParseRulesText(text, "rules.yaml");
  FUZZ_CHECK(refused_with_reason(rules.status()), "rules file refused without a reason");
  // The generic reader on its own: every key of every mapping walked, every scalar read.
  auto file = kvchaos::ConfigFile::Parse(text, "any.yaml");
  if (file.ok()) {
    kvchaos::ConfigSection root = file->Root();
    for (const std::string& key : root.Keys()) {
      std::string value;
      root.Optional(key, &value);
      int64_t ms = 0;
      root.OptionalMillis(key, &ms);
      uint64_t bytes = 0;
      root.OptionalByteSize(key, &bytes);
      kvchaos::Duration d{};
      root.OptionalDuration(key, &d);
      if (auto nested = root.Section(key)) nested->Done();
    }
    root.Done();
    FUZZ_CHECK(refused_with_reason(file->Finish()), "a config problem without a message");
  }
  return 0;
}
