// The real-mode leadership observer; see observer.h.
#include "harness/real/observer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/client/leader_discovery.h"
#include "core/common/thread_util.h"

namespace kvchaos::harness::real {
namespace {

constexpr int64_t kPollPeriodMs = 20;
constexpr int64_t kCallTimeoutMs = 150;
constexpr int kProbeAllEvery = 5;

}  // namespace

Observer::Observer(NodeCluster& cluster, std::string storage, MonoTime start)
    : cluster_(cluster), storage_(std::move(storage)), start_(start), views_(static_cast<size_t>(cluster.size())) {}

Observer::~Observer() { Stop(); }

void Observer::Start() {
  thread_ = std::thread([this] {
    SetCurrentThreadName("kvc_observer");
    Loop();
  });
}

void Observer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < static_cast<int>(views_.size()); ++i) {
    CloseBelief(i);
    CloseActing(i);
  }
}

double Observer::NowMs() const {
  return std::chrono::duration<double, std::milli>(Runtime::Real().Now() - start_).count();
}

void Observer::Loop() {
  Runtime& rt = Runtime::Real();
  MonoTime next = rt.Now();
  for (int round = 0; !stop_; ++round) {
    Round(round);
    next += std::chrono::milliseconds(kPollPeriodMs);
    const MonoTime now = rt.Now();
    if (next < now) next = now;  // a slow round (loaded machine) is not made up for with a burst
    rt.SleepUntil(next);
  }
}

void Observer::CloseBelief(int i) {
  NodeView& v = views_[static_cast<size_t>(i)];
  if (v.belief) beliefs_.push_back(*v.belief);
  v.belief.reset();
}

void Observer::CloseActing(int i) {
  NodeView& v = views_[static_cast<size_t>(i)];
  if (v.acting) acting_.push_back(*v.acting);
  v.acting.reset();
}

void Observer::Round(int round) {
  for (int i = 0; i < cluster_.size(); ++i) {
    if (cluster_.State(i) != NodeState::kUp) {
      std::lock_guard<std::mutex> lock(mu_);
      CloseBelief(i);
      CloseActing(i);
      if (current_leader_ == i) current_leader_ = -1;
      continue;
    }
    Result<nlohmann::json> info =
        client::PostJson(cluster_.AdminEndpoint(i), "GetManagerClusterInfo", nlohmann::json::object(), kCallTimeoutMs);
    const double info_ms = NowMs();
    bool leads = false;
    uint64_t token = 0;
    const bool answered = info.ok() && info->value("code", "") == "OK";
    if (answered) {
      leads = info->value("is_leader", false);
      if (info->contains("fencing_token") && (*info)["fencing_token"].is_number_unsigned()) {
        token = (*info)["fencing_token"].get<uint64_t>();
      } else if (info->contains("fencing_token") && (*info)["fencing_token"].is_number_integer()) {
        token = static_cast<uint64_t>(std::max<int64_t>(0, (*info)["fencing_token"].get<int64_t>()));
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++polls_;
      NodeView& v = views_[static_cast<size_t>(i)];
      if (answered && leads) {
        if (!v.belief || v.belief_token != token) {
          CloseBelief(i);
          v.belief = LeadershipSpan{i, info_ms, info_ms, false};
          v.belief_token = token;
        }
        v.belief->end_ms = info_ms;
        if (!v.acquired_ms.contains(token)) {
          v.acquired_ms[token] = info_ms;
          if (!acquisitions_.empty() && token <= max_token_) ++token_regressions_;
          acquisitions_.push_back(Acquisition{info_ms, i, token});
          max_token_ = std::max(max_token_, token);
        }
        current_leader_ = i;
      } else {
        CloseBelief(i);
        if (current_leader_ == i) current_leader_ = -1;
      }
      if (!answered) CloseActing(i);
    }
    if (!answered || (!leads && round % kProbeAllEvery != 0)) continue;

    nlohmann::json body = {{"keys", {kProbeKey}}, {"storage", storage_}};
    Result<nlohmann::json> probe = client::PostJson(cluster_.MetaEndpoint(i), "StartWriteCache", body, kCallTimeoutMs);
    const double probe_ms = NowMs();
    std::lock_guard<std::mutex> lock(mu_);
    NodeView& v = views_[static_cast<size_t>(i)];
    const std::string code = probe.ok() ? probe->value("code", "") : "";
    // Any answer from past the node's leader check counts as acting: after a wipe of the meta
    // index the storage may be unknown (NotFound), but the node still serves the data plane.
    const bool acting = code == "OK" || code == "NotFound" || code == "InvalidArgument" || code == "AlreadyExists";
    if (acting) {
      // The node's term is the token it reported just before; a node that does not claim to
      // lead but accepts a write is checked against every term as well.
      const double acquired = v.acquired_ms.contains(token) ? v.acquired_ms[token] : 0;
      for (size_t j = 0; j < views_.size(); ++j) {
        if (static_cast<int>(j) == i || !views_[j].last_accept) continue;
        const auto [at, other_token] = *views_[j].last_accept;
        if (other_token > token && at >= acquired) {
          ++stale_accepted_;
          break;
        }
      }
      if (!v.acting || v.acting->token != token) {
        CloseActing(i);
        v.acting = ActingSpan{i, token, probe_ms, probe_ms};
      }
      v.acting->end_ms = probe_ms;
      v.last_accept = std::make_pair(probe_ms, token);
    } else {
      if (code == "StaleFencingToken") ++stale_rejected_;
      CloseActing(i);
    }
  }
}

int Observer::CurrentLeader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_leader_;
}

std::optional<double> Observer::FirstServingSince(double since_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<double> first;
  auto consider = [&](const ActingSpan& s) {
    if (s.end_ms < since_ms) return;
    const double t = std::max(s.start_ms, since_ms);
    if (!first || t < *first) first = t;
  };
  for (const ActingSpan& s : acting_) consider(s);
  for (const NodeView& v : views_) {
    if (v.acting) consider(*v.acting);
  }
  return first;
}

std::vector<ActingSpan> Observer::ActingSpans() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ActingSpan> out = acting_;
  for (const NodeView& v : views_) {
    if (v.acting) out.push_back(*v.acting);
  }
  std::sort(out.begin(), out.end(), [](const ActingSpan& a, const ActingSpan& b) { return a.start_ms < b.start_ms; });
  return out;
}

std::vector<LeadershipSpan> Observer::BeliefSpans() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LeadershipSpan> out = beliefs_;
  for (const NodeView& v : views_) {
    if (v.belief) out.push_back(*v.belief);
  }
  std::sort(out.begin(), out.end(),
            [](const LeadershipSpan& a, const LeadershipSpan& b) { return a.start_ms < b.start_ms; });
  return out;
}

std::vector<Acquisition> Observer::Acquisitions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return acquisitions_;
}
int64_t Observer::stale_accepted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stale_accepted_;
}
int64_t Observer::stale_rejected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stale_rejected_;
}
int64_t Observer::token_regressions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return token_regressions_;
}
int64_t Observer::polls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return polls_;
}

std::vector<FailoverEvent> BuildFailovers(const std::vector<ActingSpan>& spans,
                                          const std::vector<Acquisition>& acquisitions,
                                          const std::vector<FaultMark>& faults, int64_t* windows, double* overlap_ms) {
  std::vector<ActingSpan> sorted = spans;
  std::sort(sorted.begin(), sorted.end(), [](const ActingSpan& a, const ActingSpan& b) { return a.start_ms < b.start_ms; });
  *windows = 0;
  *overlap_ms = 0;
  for (size_t a = 0; a < sorted.size(); ++a) {
    for (size_t b = a + 1; b < sorted.size() && sorted[b].start_ms <= sorted[a].end_ms; ++b) {
      if (sorted[b].node == sorted[a].node) continue;
      ++*windows;
      *overlap_ms += std::min(sorted[a].end_ms, sorted[b].end_ms) - sorted[b].start_ms;
    }
  }

  std::vector<FailoverEvent> events;
  std::optional<ActingSpan> current;
  for (const ActingSpan& s : sorted) {
    if (!current) {
      current = s;
      continue;
    }
    if (s.node == current->node && s.token == current->token) {
      current->end_ms = std::max(current->end_ms, s.end_ms);  // the same term, seen again
      continue;
    }
    if (s.start_ms <= current->end_ms && s.node != current->node) {
      // Overlapping terms are dual acting (counted above), not a handover: keep the newer term.
      if (s.token > current->token) current = s;
      continue;
    }
    FailoverEvent e;
    e.old_leader = current->node;
    e.new_leader = s.node;
    e.serving_ms = s.start_ms;
    // The cause: the latest fault started from just before the old term's last write up to the
    // new term's first one (probes are ~20 ms apart), else one active when the old term stopped.
    const FaultMark* cause = nullptr;
    for (const FaultMark& f : faults) {
      if (f.start_ms >= current->end_ms - 3 * 20.0 && f.start_ms <= s.start_ms &&
          (cause == nullptr || f.start_ms > cause->start_ms)) {
        cause = &f;
      }
    }
    if (cause == nullptr) {
      for (const FaultMark& f : faults) {
        if (f.start_ms <= current->end_ms && (!f.end_ms || *f.end_ms >= current->end_ms) &&
            (cause == nullptr || f.start_ms > cause->start_ms)) {
          cause = &f;
        }
      }
    }
    if (cause != nullptr) {
      e.fault_class = cause->fault_class;
      e.fault_at_ms = std::min(cause->start_ms, s.start_ms);
      e.old_leader_stopped_ms =
          cause->stops_node && cause->node == current->node ? cause->start_ms : current->end_ms;
    } else {
      e.fault_class = "none";
      e.fault_at_ms = current->end_ms;
      e.old_leader_stopped_ms = current->end_ms;
      e.unnecessary = true;
    }
    for (const Acquisition& a : acquisitions) {
      if (a.node == s.node && a.token == s.token) {
        e.lock_acquired_ms = a.at_ms;
        break;
      }
    }
    events.push_back(e);
    current = s;
  }
  return events;
}

}  // namespace kvchaos::harness::real
