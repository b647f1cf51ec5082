// The control protocol of faultfs: one JSON object per line in, one JSON object per line out.
//
//   {"cmd":"add","rule":{...}}  or {"cmd":"add","rules":[...]}   install rules (same keys as YAML)
//   {"cmd":"remove","id":"r1"}     {"cmd":"clear"}                 remove one / all rules
//   {"cmd":"list"}                 {"cmd":"stats"}                 rules / per-rule hits, per-op counts
//   {"cmd":"enable"}               {"cmd":"disable"}               switch all rules on / off
//   {"cmd":"release"[,"id":"r1"]}                                  release hung calls
//   {"cmd":"crash"}                                                drop unsynced writes of tracked files
//
// Replies are {"ok":true,...} or {"ok":false,"error":"..."}; a bad command (not JSON, not UTF-8,
// a key given twice, an unknown field) changes nothing.
#pragma once

#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "faultfs/rule_engine.h"

namespace kvchaos::faultfs {

class ControlCommands {
 public:
  ControlCommands(RuleEngine& engine, std::function<nlohmann::json()> crash)
      : engine_(engine), crash_(std::move(crash)) {}
  // Handles one request line; never throws.
  nlohmann::json Handle(std::string_view line);

 private:
  nlohmann::json Dispatch(const nlohmann::json& request);
  RuleEngine& engine_;
  std::function<nlohmann::json()> crash_;
};

}  // namespace kvchaos::faultfs
