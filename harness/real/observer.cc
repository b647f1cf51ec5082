// The real-mode leadership observer; see observer.h.
#include "harness/real/observer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/client/leader_discovery.h"
#include "core/election/leader_elector.h"
#include "core/common/thread_util.h"

namespace kvchaos::harness::real {
namespace {

constexpr int64_t kPollPeriodMs = 20;
constexpr int64_t kCallTimeoutMs = 150;
constexpr int kProbeAllEvery = 5;

// The fencing token a StartWriteCache answer's session was opened under (absent from old nodes).
std::optional<uint64_t> SessionToken(const nlohmann::json& answer) {
  const auto session = answer.find("session");
  if (session == answer.end() || !session->is_object()) return std::nullopt;
  const auto token = session->find("fencing_token");
  if (token == session->end() || !token->is_number_unsigned()) return std::nullopt;
  return token->get<uint64_t>();
}

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
    const double sent_ms = NowMs();
    Result<nlohmann::json> probe = client::PostJson(cluster_.MetaEndpoint(i), "StartWriteCache", body, kCallTimeoutMs);
    const double probe_ms = NowMs();
    std::lock_guard<std::mutex> lock(mu_);
    NodeView& v = views_[static_cast<size_t>(i)];
    const std::string code = probe.ok() ? probe->value("code", "") : "";
    // Any answer from past the node's leader check counts as acting: after a wipe of the meta
    // index the storage may be unknown (NotFound), but the node still serves the data plane.
    const bool acting = code == "OK" || code == "NotFound" || code == "InvalidArgument" || code == "AlreadyExists";
    if (acting) {
      // An acknowledged write is judged by the term its session names; the acting span keeps the
      // token polled before it, as the acquisitions do.
      if (code == "OK" && fence_order_.Acknowledged(SessionToken(*probe).value_or(token))) ++stale_accepted_;
      if (!v.acting || v.acting->token != token) {
        CloseActing(i);
        v.acting = ActingSpan{i, token, probe_ms, probe_ms};
      }
      v.acting->end_ms = probe_ms;
      v.acting->last_sent_ms = sent_ms;
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

sim::LeaseStops CheckRealLeaseStops(const std::vector<ActingSpan>& spans, const std::vector<sim::TermLeaseEnd>& lease_ends,
                                    const Topology& topology) {
  std::vector<sim::TermSpan> last_writes;
  for (const ActingSpan& s : spans) {
    last_writes.push_back(sim::TermSpan{s.node, s.token, static_cast<int64_t>(s.start_ms * 1e6),
                                        static_cast<int64_t>(s.last_sent_ms * 1e6)});
  }
  return sim::CheckLeaseStops(last_writes, lease_ends, ToMillis(topology.loop_interval) * 1'000'000);
}

sim::FailoverCheckOptions RealFailoverCheckOptions(const Topology& topology) {
  const int64_t lease_ms = ToMillis(topology.lease);
  const int64_t margin_ms = election::DefaultSafetyMarginMs(lease_ms, ToMillis(topology.loop_interval));
  return sim::FailoverCheckOptions{lease_ms * 1'000'000, margin_ms * 1'000'000, 3 * kPollPeriodMs * 1'000'000};
}

std::vector<FailoverEvent> BuildFailovers(const std::vector<ActingSpan>& spans,
                                          const std::vector<Acquisition>& acquisitions,
                                          const std::vector<FaultMark>& faults, const sim::FailoverCheckOptions& options,
                                          int64_t* windows, double* overlap_ms) {
  auto ns = [](double ms) { return static_cast<int64_t>(ms * 1e6); };
  auto ms = [](int64_t ns_value) { return static_cast<double>(ns_value) / 1e6; };
  std::vector<sim::TermSpan> terms;
  for (const ActingSpan& s : spans) terms.push_back(sim::TermSpan{s.node, s.token, ns(s.start_ms), ns(s.end_ms)});
  std::vector<sim::LockAcquired> acquired;
  for (const Acquisition& a : acquisitions) acquired.push_back(sim::LockAcquired{ns(a.at_ms), a.node, a.token});
  std::vector<sim::FaultSpan> marks;
  for (const FaultMark& f : faults) {
    marks.push_back(sim::FaultSpan{ns(f.start_ms), ns(f.end_ms.value_or(f.start_ms)), f.scope, f.node, f.fault_class,
                                   f.stops_node});
  }
  const sim::FailoverVerdict verdict = sim::CheckFailovers(terms, acquired, marks, options);
  *windows = static_cast<int64_t>(verdict.dual_acting_windows);
  *overlap_ms = ms(verdict.dual_acting_ns);
  std::vector<FailoverEvent> events;
  for (const sim::Failover& f : verdict.failovers) {
    FailoverEvent e;
    e.old_leader = f.from_node;
    e.new_leader = f.to_node;
    e.serving_ms = ms(f.serving_ns);
    e.old_leader_stopped_ms = ms(f.old_stopped_ns);
    if (f.lock_acquired_ns >= 0) e.lock_acquired_ms = ms(f.lock_acquired_ns);
    e.fault_class = f.fault >= 0 ? faults[static_cast<size_t>(f.fault)].fault_class : "none";
    e.fault_at_ms = ms(f.fault_ns >= 0 ? f.fault_ns : f.old_stopped_ns);
    e.unnecessary = f.unnecessary;
    events.push_back(e);
  }
  return events;
}

}  // namespace kvchaos::harness::real
