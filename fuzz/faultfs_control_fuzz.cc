// Fuzz target: faultfs's control protocol (faultfs/control_commands.h), one request line per
// input, against one rule engine that lives across inputs (as in faultfs). Every line gets a JSON
// object with "ok"; a refused line changes nothing (the rule list is the same before and after).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/json_text.h"
#include "faultfs/control_commands.h"
#include "fuzz/fuzz_check.h"

namespace {

struct Faultfs {
  kvchaos::faultfs::RuleEngine engine{1, nullptr};
  kvchaos::faultfs::ControlCommands commands{engine, [] { return nlohmann::json{{"ok", true}, {"files", 0}}; }};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<Faultfs> fs;
  static int runs = 0;
  if (!fs || ++runs % 1000 == 0) fs = std::make_unique<Faultfs>();  // rules added by inputs stay bounded
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  const size_t rules_before = fs->engine.List().size();
  const nlohmann::json reply = fs->commands.Handle(line);
  FUZZ_CHECK(reply.is_object() && reply.contains("ok") && reply["ok"].is_boolean(), "reply without ok: " + kvchaos::DumpJson(reply));
  (void)kvchaos::DumpJson(reply);  // what goes back on the socket must always dump
  if (!reply["ok"].get<bool>()) {
    FUZZ_CHECK(reply.contains("error") && reply["error"].is_string(), "a refusal without an error text");
    FUZZ_CHECK(fs->engine.List().size() == rules_before, "a refused command changed the rules");
  }
  return 0;
}
