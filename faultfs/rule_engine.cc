// Rule matching, hit decisions, sleeps and hangs; see rule_engine.h.
#include "faultfs/rule_engine.h"

#include <algorithm>
#include <set>

#include "faultfs/glob.h"

namespace kvchaos::faultfs {

RuleEngine::RuleEngine(uint64_t seed, FaultLog* log, Runtime& runtime)
    : seed_(seed),
      seed_rng_(Rng(seed).Split("faultfs")),
      log_(log),
      rules_(std::make_shared<const RuleList>()),
      runtime_(runtime),
      wait_mu_(runtime),
      wait_cv_(runtime) {
  live_.store(rules_.get(), std::memory_order_release);
}

void RuleEngine::PublishLocked(std::shared_ptr<const RuleList> next) {
  retired_.push_back(rules_);
  rules_ = std::move(next);
  live_.store(rules_.get(), std::memory_order_release);
  rule_count_.store(rules_->size(), std::memory_order_release);
}

std::shared_ptr<const RuleEngine::RuleList> RuleEngine::Snapshot() const {
  std::lock_guard<std::mutex> lock(rules_mu_);
  return rules_;
}

Status RuleEngine::Add(std::vector<Rule> rules) {
  const MonoTime now = runtime_.Now();
  std::lock_guard<std::mutex> lock(rules_mu_);
  std::set<std::string> ids;
  for (const auto& state : *rules_) ids.insert(state->rule.id);
  for (const Rule& rule : rules) {
    if (!ids.insert(rule.id).second) {
      return Status::InvalidArgument("rule id '" + rule.id + "' is already installed");
    }
  }
  auto next = std::make_shared<RuleList>(*rules_);
  for (Rule& rule : rules) next->push_back(std::make_shared<RuleState>(std::move(rule), seed_rng_, now));
  PublishLocked(std::move(next));
  return Status::Ok();
}

Status RuleEngine::Remove(const std::string& id) {
  std::shared_ptr<RuleState> removed;
  {
    std::lock_guard<std::mutex> lock(rules_mu_);
    auto next = std::make_shared<RuleList>(*rules_);
    auto it = std::find_if(next->begin(), next->end(), [&](const auto& s) { return s->rule.id == id; });
    if (it == next->end()) return Status::NotFound("no rule with id '" + id + "'");
    removed = *it;
    next->erase(it);
    PublishLocked(std::move(next));
  }
  // Calls hung by a removed rule would otherwise wait for a release nobody can name.
  {
    MutexLock lock(wait_mu_);
    removed->removed.store(true);
    removed->release_gen.fetch_add(1);
  }
  wait_cv_.NotifyAll();
  return Status::Ok();
}

void RuleEngine::Clear() {
  std::shared_ptr<const RuleList> old;
  {
    std::lock_guard<std::mutex> lock(rules_mu_);
    old = rules_;
    PublishLocked(std::make_shared<const RuleList>());
  }
  {
    MutexLock lock(wait_mu_);
    for (const auto& state : *old) {
      state->removed.store(true);
      state->release_gen.fetch_add(1);
    }
  }
  wait_cv_.NotifyAll();
}

std::vector<Rule> RuleEngine::List() const {
  std::vector<Rule> out;
  for (const auto& state : *Snapshot()) out.push_back(state->rule);
  return out;
}

bool RuleEngine::AnyRuleMatchesPath(std::string_view path) const {
  if (rule_count_.load(std::memory_order_acquire) == 0) return false;
  for (const auto& state : *live_.load(std::memory_order_acquire)) {
    if (GlobMatch(state->rule.path, path)) return true;
  }
  return false;
}

bool RuleEngine::Decide(RuleState& state, uint64_t match, Rng& rng) {
  const Rule& rule = state.rule;
  bool hit = false;
  switch (rule.trigger) {
    case Trigger::kEvery: hit = match % rule.every == 0; break;
    case Trigger::kNth: hit = match == rule.nth; break;
    case Trigger::kProbability: hit = rng.Bernoulli(rule.probability); break;
  }
  if (!hit) return false;
  if (rule.max_hits == 0) {
    state.hits.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  uint64_t hits = state.hits.load(std::memory_order_relaxed);
  while (hits < rule.max_hits) {
    if (state.hits.compare_exchange_weak(hits, hits + 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

CallPlan RuleEngine::Plan(const CallInfo& call) {
  CallPlan plan;
  if (!Active()) return plan;
  const RuleList* rules = live_.load(std::memory_order_acquire);  // no lock on the hot path
  MonoTime now{};
  bool have_now = false;
  for (const auto& state : *rules) {
    const Rule& rule = state->rule;
    if ((rule.ops & OpBit(call.op)) == 0) continue;
    if (!GlobMatch(rule.path, call.path)) continue;
    if (rule.from.count() > 0 || rule.until) {
      if (!have_now) {
        now = runtime_.Now();
        have_now = true;
      }
      const Duration age = now - state->installed;
      if (age < rule.from || (rule.until && age >= *rule.until)) continue;
    }
    if (rule.action == ActionKind::kDropUnsynced) {
      plan.track_unsynced = true;
      plan.need_dir_sync = plan.need_dir_sync || rule.dir_sync;
      continue;
    }
    const uint64_t match = state->matched.fetch_add(1, std::memory_order_relaxed) + 1;
    const bool is_delay = rule.action == ActionKind::kLatency || rule.action == ActionKind::kHang;
    // A call takes one data action; later rules of that kind still count the match.
    if (!is_delay && plan.action) continue;
    Rng rng = state->rng.Split(match);
    if (!Decide(*state, match, rng)) continue;
    faults_.fetch_add(1, std::memory_order_relaxed);
    Hit hit{state, match, rng};
    if (is_delay) {
      plan.delays.push_back(std::move(hit));
    } else {
      plan.action = std::move(hit);
    }
  }
  return plan;
}

Duration RuleEngine::DrawLatency(const Rule& rule, Rng& rng) const {
  switch (rule.dist) {
    case LatencyDist::kFixed:
      return rule.latency;
    case LatencyDist::kUniform:
      return Duration(rng.UniformInt(rule.latency.count(), rule.latency_max.count()));
    case LatencyDist::kExponential:
      return Duration(static_cast<int64_t>(rng.Exponential(static_cast<double>(rule.latency.count()))));
  }
  return Duration(0);
}

void RuleEngine::RunDelays(const CallPlan& plan, const CallInfo& call) {
  for (const Hit& hit : plan.delays) {
    RuleState& state = *hit.state;
    if (state.rule.action == ActionKind::kLatency) {
      Rng rng = hit.rng;
      const Duration latency = DrawLatency(state.rule, rng);
      LogFault(call, hit, {{"latency_us", std::chrono::duration_cast<std::chrono::microseconds>(latency).count()}});
      const MonoTime deadline = runtime_.Now() + latency;
      MutexLock lock(wait_mu_);
      while (!shutdown_ && wait_cv_.WaitUntil(wait_mu_, deadline)) {
      }
      continue;
    }
    LogFault(call, hit, {{"hang", true}});
    const MonoTime start = runtime_.Now();
    {
      MutexLock lock(wait_mu_);
      const uint64_t gen = release_gen_;
      const uint64_t rule_gen = state.release_gen.load();
      state.hung.fetch_add(1);
      while (!shutdown_ && !state.removed.load() && release_gen_ == gen && state.release_gen.load() == rule_gen) {
        wait_cv_.Wait(wait_mu_);
      }
      state.hung.fetch_sub(1);
    }
    LogEvent({{"event", "released"},
              {"op", std::string(OpName(call.op))},
              {"path", std::string(call.path)},
              {"rule", state.rule.id},
              {"hung_ms", ToMillis(runtime_.Now() - start)}});
  }
}

Result<int64_t> RuleEngine::Release(const std::string& id) {
  int64_t released = 0;
  const std::shared_ptr<const RuleList> rules = Snapshot();
  bool found = id.empty();
  MutexLock lock(wait_mu_);
  for (const auto& state : *rules) {
    if (!id.empty() && state->rule.id != id) continue;
    found = true;
    released += state->hung.load();
    if (!id.empty()) state->release_gen.fetch_add(1);
  }
  if (!found) return Status::NotFound("no rule with id '" + id + "'");
  if (id.empty()) ++release_gen_;
  wait_cv_.NotifyAll();
  return released;
}

void RuleEngine::Shutdown() {
  {
    MutexLock lock(wait_mu_);
    shutdown_ = true;
  }
  wait_cv_.NotifyAll();
}

void RuleEngine::LogFault(const CallInfo& call, const Hit& hit, nlohmann::json detail) {
  nlohmann::json record = {{"op", std::string(OpName(call.op))},
                           {"path", std::string(call.path)},
                           {"rule", hit.state->rule.id},
                           {"match", hit.match},
                           {"action", std::string(ActionName(hit.state->rule.action))}};
  if (call.op == Op::kRead || call.op == Op::kWrite || call.op == Op::kFallocate) {
    record["offset"] = call.offset;
    record["size"] = call.size;
  }
  for (auto& [key, value] : detail.items()) record[key] = value;
  LogEvent(std::move(record));
}

void RuleEngine::LogEvent(nlohmann::json record) {
  if (log_ != nullptr) log_->Append(std::move(record));
}

void RuleEngine::CountOp(Op op, int err, Duration latency) {
  OpCounters& c = ops_[static_cast<int>(op)];
  c.calls.fetch_add(1, std::memory_order_relaxed);
  if (err != 0) c.errors.fetch_add(1, std::memory_order_relaxed);
  const auto ns = static_cast<uint64_t>(std::max<int64_t>(0, latency.count()));
  c.latency_ns_total.fetch_add(ns, std::memory_order_relaxed);
  uint64_t max = c.latency_ns_max.load(std::memory_order_relaxed);
  while (ns > max && !c.latency_ns_max.compare_exchange_weak(max, ns, std::memory_order_relaxed)) {
  }
}

nlohmann::json RuleEngine::Stats() const {
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& state : *Snapshot()) {
    rules.push_back({{"id", state->rule.id},
                     {"matched", state->matched.load()},
                     {"hits", state->hits.load()},
                     {"hung", state->hung.load()}});
  }
  nlohmann::json ops = nlohmann::json::object();
  for (int i = 0; i < kOpCount; ++i) {
    const OpCounters& c = ops_[i];
    const uint64_t calls = c.calls.load();
    if (calls == 0) continue;
    ops[std::string(OpName(static_cast<Op>(i)))] = {
        {"calls", calls},
        {"errors", c.errors.load()},
        {"latency_us_mean", static_cast<double>(c.latency_ns_total.load()) / static_cast<double>(calls) / 1000.0},
        {"latency_us_max", static_cast<double>(c.latency_ns_max.load()) / 1000.0}};
  }
  return {{"enabled", enabled()}, {"seed", seed()}, {"faults", faults_.load()}, {"rules", rules}, {"ops", ops}};
}

}  // namespace kvchaos::faultfs
