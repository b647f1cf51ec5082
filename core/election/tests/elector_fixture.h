// Shared scaffolding of the elector tests: a manual clock, a scripted backend and electors whose
// callbacks record what they saw (and can be held open to widen a race window).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "core/election/leader_elector.h"
#include "core/election/tests/manual_runtime.h"
#include "core/election/tests/scripted_backend.h"

namespace kvchaos::election::testing {

using namespace std::chrono_literals;

// Callback recorder; Hold*(true) makes the next callback wait until Hold*(false).
struct CallbackLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<FencingToken> promotions;
  int demotions = 0;
  bool hold_promote = false;
  bool hold_demote = false;
  bool in_promote = false;
  bool in_demote = false;

  LeaderElectorCallbacks Callbacks() {
    return {[this](FencingToken t) {
              std::unique_lock<std::mutex> l(mu);
              promotions.push_back(t);
              in_promote = true;
              cv.notify_all();
              cv.wait_for(l, 20s, [&] { return !hold_promote; });  // capped: a failed test must not hang
              in_promote = false;
            },
            [this] {
              std::unique_lock<std::mutex> l(mu);
              ++demotions;
              in_demote = true;
              cv.notify_all();
              cv.wait_for(l, 20s, [&] { return !hold_demote; });
              in_demote = false;
            }};
  }
  void HoldPromote(bool on) {
    std::lock_guard<std::mutex> l(mu);
    hold_promote = on;
    cv.notify_all();
  }
  void HoldDemote(bool on) {
    std::lock_guard<std::mutex> l(mu);
    hold_demote = on;
    cv.notify_all();
  }
  bool InPromote() {
    std::lock_guard<std::mutex> l(mu);
    return in_promote;
  }
  bool InDemote() {
    std::lock_guard<std::mutex> l(mu);
    return in_demote;
  }
  size_t Promotions() {
    std::lock_guard<std::mutex> l(mu);
    return promotions.size();
  }
  int Demotions() {
    std::lock_guard<std::mutex> l(mu);
    return demotions;
  }
};

inline LeaderElectorOptions TestOptions(std::string node_id) {
  LeaderElectorOptions o;
  o.node_id = std::move(node_id);
  o.lease_ms = 1000;
  o.loop_interval_ms = 50;
  o.safety_margin_ms = 100;
  return o;
}

class ElectorTest : public ::testing::Test {
 protected:
  std::unique_ptr<LeaderElector> Make(LeaderElectorOptions o, CallbackLog& log) {
    return std::make_unique<LeaderElector>(rt_, backend_, std::move(o), log.Callbacks());
  }
  static bool WaitState(LeaderElector& e, ElectorState s) {
    return WaitFor([&] { return e.state() == s; });
  }
  ManualRuntime rt_;
  ScriptedBackend backend_{rt_};
};

}  // namespace kvchaos::election::testing
