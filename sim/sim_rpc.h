// SimRpc: the caller's side of a request/reply exchange over the simulated network, shared by
// every simulated client (coordination, meta index, node API). A call sends the request to a host,
// where `serve` runs on the scheduler context when it arrives and answers through `respond` — at
// once (a server applying it in place) or later, from a server thread. The reply travels back over
// the network; the caller waits for it on its own node's clock until its deadline. A reply that
// arrives after the deadline, a duplicate, or one for a caller that is gone is dropped: a timed-out
// write may still have been applied ("applied but the reply was lost").
// Replies find their caller through a shared block that outlives the caller, so a reply landing
// after the caller was destroyed (end of a run) is simply dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "core/common/runtime.h"
#include "sim/sim_network.h"
#include "sim/sim_runtime.h"

namespace kvchaos::sim {

template <typename Reply>
class SimRpc {
 public:
  using Respond = std::function<void(Reply)>;
  using Serve = std::function<void(Respond)>;
  enum class Outcome { kReplied, kTimedOut, kCutOff };

  SimRpc(SimRuntime& runtime, SimNetwork& network, int host)
      : runtime_(runtime), network_(network), host_(host), shared_(std::make_shared<Shared>(runtime)) {}
  ~SimRpc() { shared_->alive = false; }
  SimRpc(const SimRpc&) = delete;
  SimRpc& operator=(const SimRpc&) = delete;

  int host() const { return host_; }

  // The caller's process is gone: pending and later calls end at once with kCutOff (used to shut
  // down the threads of a crashed incarnation at the end of a run without touching the world).
  void CutOff() {
    MutexLock lock(shared_->mu);
    shared_->cut_off = true;
    shared_->cv.NotifyAll();
  }
  bool cut_off() const { return shared_->cut_off; }

  // Sends one request to `to` and waits until the reply or `deadline` (the caller's clock).
  // Must run on a simulated thread. *reply is set only with kReplied. Each copy of `serve` runs
  // at most once (a duplicated message runs a copy), so it may move out what it captured.
  Outcome Call(int to, const TraceTag& what, Serve serve, MonoTime deadline, Reply* reply) {
    std::shared_ptr<Shared> shared = shared_;
    uint64_t call = 0;
    {
      MutexLock lock(shared->mu);
      if (shared->cut_off) return Outcome::kCutOff;
      call = ++shared->next_call;
      shared->pending.emplace(call, std::nullopt);
    }
    SimNetwork* network = &network_;
    const int from = host_;
    const TraceTag* tag = &what;
    network_.Send(from, to, what, [=, serve = std::move(serve)] {
      serve([=](Reply answer) {
        network->Send(to, from, *tag, [shared, call, answer = std::move(answer)]() mutable {
          if (!shared->alive) return;
          MutexLock lock(shared->mu);
          auto it = shared->pending.find(call);
          if (it == shared->pending.end() || it->second.has_value()) return;
          it->second = std::move(answer);
          shared->cv.NotifyAll();
        });
      });
    });
    MutexLock lock(shared->mu);
    while (true) {
      auto it = shared->pending.find(call);
      if (it->second.has_value()) {
        *reply = std::move(*it->second);
        shared->pending.erase(it);
        return Outcome::kReplied;
      }
      if (shared->cut_off) {
        shared->pending.erase(it);
        return Outcome::kCutOff;
      }
      if (!shared->cv.WaitUntil(shared->mu, deadline)) {
        shared->pending.erase(it);  // a late reply finds no caller and is dropped
        return Outcome::kTimedOut;
      }
    }
  }

 private:
  struct Shared {
    explicit Shared(SimRuntime& runtime) : mu(runtime), cv(runtime) {}
    Mutex mu;
    CondVar cv;
    bool alive = true;
    bool cut_off = false;
    uint64_t next_call = 0;
    // Calls waiting for their reply; a reply for a call not here (timed out, duplicate) is dropped.
    std::map<uint64_t, std::optional<Reply>> pending;
  };

  SimRuntime& runtime_;
  SimNetwork& network_;
  const int host_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace kvchaos::sim
