#include "sim/sim_redis.h"

#include <algorithm>

namespace kvchaos::sim {

const char* OpName(BackendRequest::Op op) {
  switch (op) {
    case BackendRequest::Op::kTryLock: return "TryLock";
    case BackendRequest::Op::kRenewLock: return "RenewLock";
    case BackendRequest::Op::kUnlock: return "Unlock";
    case BackendRequest::Op::kGetLockHolder: return "GetLockHolder";
    case BackendRequest::Op::kSetValue: return "SetValue";
    case BackendRequest::Op::kSetValueWithTtl: return "SetValueWithTtl";
    case BackendRequest::Op::kGetValue: return "GetValue";
    case BackendRequest::Op::kDeleteValue: return "DeleteValue";
    case BackendRequest::Op::kListValues: return "ListValues";
    case BackendRequest::Op::kRaiseTokenFloor: return "RaiseTokenFloor";
  }
  return "?";
}

const TraceTag& OpTag(BackendRequest::Op op) {
  static const TraceTag tags[] = {
      TraceTag("TryLock"),  TraceTag("RenewLock"),       TraceTag("Unlock"),   TraceTag("GetLockHolder"),
      TraceTag("SetValue"), TraceTag("SetValueWithTtl"), TraceTag("GetValue"), TraceTag("DeleteValue"),
      TraceTag("ListValues"), TraceTag("RaiseTokenFloor")};
  return tags[static_cast<size_t>(op)];
}

SimRedis::SimRedis(SimRuntime& runtime, int host, std::shared_ptr<CoordinationTruth> truth)
    : runtime_(runtime), host_(host), truth_(truth ? std::move(truth) : std::make_shared<CoordinationTruth>()) {}

int64_t SimRedis::WallNs() const { return runtime_.clock(host_).WallAt(runtime_.true_now()).time_since_epoch().count(); }

const SimRedis::Lock* SimRedis::LiveLock(const std::string& key) {
  auto it = locks_.find(key);
  if (it == locks_.end()) return nullptr;
  if (it->second.expire_at_ns <= WallNs()) {
    locks_.erase(it);  // lazy expiry, as Redis does on access
    return nullptr;
  }
  return &it->second;
}

void SimRedis::Crash() {
  up_ = false;
  runtime_.trace().Event(runtime_.true_now(), host_, 0, "redis-down");
}

void SimRedis::Restart(bool persistent) {
  if (!persistent) {
    locks_.clear();
    counters_.clear();
    values_.clear();
  }
  up_ = true;
  runtime_.trace().Event(runtime_.true_now(), host_, 0, persistent ? "redis-restart" : "redis-restart-wiped");
}

KeyState SimRedis::StateOf(const std::string& key) const {
  KeyState state;
  state.key = key;
  if (auto it = locks_.find(key); it != locks_.end()) {
    state.lock = KeyState::Lock{it->second.holder, it->second.expire_at_ns, it->second.token};
  }
  if (auto it = counters_.find(key); it != counters_.end()) state.counter = it->second;
  if (auto it = values_.find(key); it != values_.end()) {
    state.value = KeyState::Value{it->second.value, it->second.expire_at_ns};
  }
  return state;
}

void SimRedis::Replicate(const std::string& key) const {
  if (write_hook_) write_hook_(StateOf(key));
}

void SimRedis::ApplyReplicated(const KeyState& state) {
  if (state.lock) {
    locks_[state.key] = Lock{state.lock->holder, state.lock->expire_at_ns, state.lock->token};
  } else {
    locks_.erase(state.key);
  }
  if (state.counter) {
    counters_[state.key] = *state.counter;
  } else {
    counters_.erase(state.key);
  }
  if (state.value) {
    values_[state.key] = Value{state.value->value, state.value->expire_at_ns};
  } else {
    values_.erase(state.key);
  }
}

void SimRedis::RecordGrant(const std::string& key, const std::string& holder, uint64_t token, bool new_holding,
                           int64_t duration_ns) {
  CoordinationTruth& t = *truth_;
  if (new_holding) {
    auto it = t.holdings.find(key);
    if (it != t.holdings.end() && it->second.holder != holder &&
        runtime_.clock(it->second.host).WallAt(runtime_.true_now()).time_since_epoch().count() <
            it->second.expire_at_ns) {
      ++t.duplicate_holders;
      runtime_.trace().Event(runtime_.true_now(), host_, 0, "duplicate-holder", static_cast<int64_t>(token), 0, holder);
    }
    t.holdings[key] = CoordinationTruth::Holding{holder, host_, WallNs() + duration_ns};
  }
  uint64_t& max = t.max_granted[key];
  if (token <= max) ++t.token_regressions;
  if (token > max) max = token;
  t.grants.push_back(GrantRecord{runtime_.true_now(), holder, token});
}

bool SimRedis::HeldWith(std::string_view holder, uint64_t token) {
  const int64_t now = WallNs();
  for (const auto& [key, lock] : locks_) {  // std::map: key order
    if (lock.holder == holder && lock.token == token && lock.expire_at_ns > now) return true;
  }
  return false;
}

BackendReply SimRedis::Apply(const BackendRequest& r) {
  BackendReply reply;
  ++applied_;
  const int64_t now = WallNs();
  using Op = BackendRequest::Op;
  switch (r.op) {
    case Op::kTryLock: {
      const Lock* lock = LiveLock(r.key);
      if (lock != nullptr && lock->holder != r.arg) {
        reply.status = Status(StatusCode::kAlreadyExists, "lock '" + r.key + "' is held by '" + lock->holder + "'");
        break;
      }
      reply.token = ++counters_[r.key];
      locks_[r.key] = Lock{r.arg, now + r.duration_ns, reply.token};
      truth_->lease_ends[LeaseEnd{r.arg, reply.token}] = runtime_.true_now() + r.duration_ns;
      RecordGrant(r.key, r.arg, reply.token, /*new_holding=*/true, r.duration_ns);
      Replicate(r.key);
      break;
    }
    case Op::kRenewLock: {
      auto it = locks_.find(r.key);
      if (LiveLock(r.key) == nullptr || it->second.holder != r.arg) {
        reply.status = Status(StatusCode::kLockLost, "lock '" + r.key + "' is not held by '" + r.arg + "'");
        // The holder learns it lost the lock: from here it no longer holds it.
        if (auto h = truth_->holdings.find(r.key); h != truth_->holdings.end() && h->second.holder == r.arg) {
          truth_->holdings.erase(h);
        }
        break;
      }
      it->second.expire_at_ns = now + r.duration_ns;
      truth_->lease_ends[LeaseEnd{r.arg, it->second.token}] = runtime_.true_now() + r.duration_ns;
      truth_->holdings[r.key] = CoordinationTruth::Holding{r.arg, host_, now + r.duration_ns};
      Replicate(r.key);
      break;
    }
    case Op::kUnlock: {
      const Lock* lock = LiveLock(r.key);
      if (lock == nullptr || lock->holder != r.arg) {
        reply.status = Status(StatusCode::kLockLost, "lock '" + r.key + "' is not held by '" + r.arg + "'");
        break;
      }
      locks_.erase(r.key);
      if (auto h = truth_->holdings.find(r.key); h != truth_->holdings.end() && h->second.holder == r.arg) {
        truth_->holdings.erase(h);
      }
      Replicate(r.key);
      break;
    }
    case Op::kGetLockHolder: {
      const Lock* lock = LiveLock(r.key);
      auto counter = counters_.find(r.key);
      reply.token = counter == counters_.end() ? 0 : counter->second;
      if (lock != nullptr) {
        reply.text = lock->holder;
        reply.ttl_ns = lock->expire_at_ns - now;
      }
      break;
    }
    case Op::kSetValue:
      values_[r.key] = Value{r.arg, 0};
      Replicate(r.key);
      break;
    case Op::kSetValueWithTtl:
      values_[r.key] = Value{r.arg, now + r.duration_ns};
      Replicate(r.key);
      break;
    case Op::kGetValue: {
      auto it = values_.find(r.key);
      if (it != values_.end() && it->second.expire_at_ns != 0 && it->second.expire_at_ns <= now) {
        values_.erase(it);
        it = values_.end();
      }
      if (it == values_.end()) {
        reply.status = Status::NotFound("no value for key '" + r.key + "'");
      } else {
        reply.text = it->second.value;
      }
      break;
    }
    case Op::kDeleteValue:
      values_.erase(r.key);
      Replicate(r.key);
      break;
    case Op::kListValues:
      // std::map iterates in key order: the sorted answer the interface promises.
      for (auto it = values_.lower_bound(r.key); it != values_.end() && it->first.compare(0, r.key.size(), r.key) == 0;
           ++it) {
        if (it->second.expire_at_ns != 0 && it->second.expire_at_ns <= now) continue;
        reply.values.push_back(election::KeyValue{it->first, it->second.value});
      }
      break;
    case Op::kRaiseTokenFloor: {
      const Lock* lock = LiveLock(r.key);
      if (lock == nullptr || lock->holder != r.arg) {
        reply.status = Status(StatusCode::kLockLost, "lock '" + r.key + "' is not held by '" + r.arg + "'");
        break;
      }
      uint64_t& counter = counters_[r.key];
      counter = std::max(counter, r.token) + 1;
      truth_->lease_ends[LeaseEnd{r.arg, counter}] = truth_->lease_ends[LeaseEnd{r.arg, lock->token}];  // the same holding
      locks_[r.key].token = counter;
      reply.token = counter;
      // The ground truth counts it as a grant: tokens a term uses must keep increasing.
      RecordGrant(r.key, r.arg, reply.token, /*new_holding=*/false, 0);
      Replicate(r.key);
      break;
    }
  }
  return reply;
}

}  // namespace kvchaos::sim
