// The per-key linearizability search over the meta model, its shrink, and the cheap invariants
// (see the header; the model is written down in docs/history.md).
#include "sim/linearizability.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/common/rng.h"
#include "core/common/runtime.h"

namespace kvchaos::sim {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
// Storages a key may have locations on in the model; a key past it is reported as not checkable.
constexpr size_t kMaxLocations = 4;

bool IsMetaOp(HistoryOp op) { return op != HistoryOp::kSave && op != HistoryOp::kLoad; }

// When an op may have taken effect by: an unknown one never finished.
int64_t EffectiveComplete(const HistoryRecord& r) {
  return r.outcome == HistoryOutcome::kUnknown ? kNever : r.complete_ns;
}

// --- the sequential model -------------------------------------------------------------------

struct Loc {
  int64_t checksum = 0;
  int32_t storage = 0;
  int32_t session = 0;  // of a writing location
  bool serving = false;
  bool has_checksum = false;
  friend bool operator==(const Loc&, const Loc&) = default;
};

// A key's locations in stored order (the first serving one wins a read).
struct State {
  std::array<Loc, kMaxLocations> locs{};
  uint8_t count = 0;
  friend bool operator==(const State& a, const State& b) {
    if (a.count != b.count) return false;
    for (size_t i = 0; i < a.count; ++i) {
      if (!(a.locs[i] == b.locs[i])) return false;
    }
    return true;
  }
};

uint64_t HashState(const State& s) {
  uint64_t h = Mix64(s.count);
  for (size_t i = 0; i < s.count; ++i) {
    const Loc& l = s.locs[i];
    h = Mix64(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(l.storage)) << 1) ^ (l.serving ? 1u : 0u));
    h = Mix64(h ^ static_cast<uint64_t>(static_cast<uint32_t>(l.session)) ^ (l.has_checksum ? 1ull << 40 : 0));
    h = Mix64(h ^ static_cast<uint64_t>(l.checksum));
  }
  return h;
}

enum class Kind : uint8_t { kStart, kFinish, kFinishRefused, kGet, kRemove };

struct Op {
  Kind kind = Kind::kGet;
  bool unknown = false;
  int32_t storage = 0;
  int32_t session = 0;
  bool found = false;  // start: cached; get: a location came back
  bool has_checksum = false;
  int64_t checksum = 0;
  int64_t call_ns = 0;
  int64_t ret_ns = 0;
  size_t record = 0;  // index into the key's records
};

bool ChecksumMatches(const Loc& loc, const Op& op) {
  return loc.has_checksum == op.has_checksum && (!op.has_checksum || loc.checksum == op.checksum);
}

// Applies `op` to `s`; false when its recorded answer cannot come from `s`.
bool Step(const State& s, const Op& op, State& out) {
  out = s;
  switch (op.kind) {
    case Kind::kStart: {
      Loc* mine = nullptr;
      for (size_t i = 0; i < out.count; ++i) {
        if (out.locs[i].storage == op.storage) mine = &out.locs[i];
      }
      if (mine != nullptr && mine->serving) {
        return op.unknown || (op.found && ChecksumMatches(*mine, op));
      }
      if (!op.unknown && op.found) return false;
      const Loc fresh{0, op.storage, op.session, false, false};
      if (mine != nullptr) {
        *mine = fresh;  // takes over a location whose writer never finished
      } else {
        if (out.count == kMaxLocations) return false;
        out.locs[out.count++] = fresh;
      }
      return true;
    }
    case Kind::kFinish: {
      bool served = false;
      for (size_t i = 0; i < out.count; ++i) {
        Loc& loc = out.locs[i];
        if (!loc.serving && loc.session == op.session) {
          loc.serving = true;
          loc.session = 0;
          if (op.has_checksum) {
            loc.has_checksum = true;
            loc.checksum = op.checksum;
          }
          return true;
        }
        served |= loc.serving;
      }
      return served || op.unknown;  // unknown: it may have applied as the refusal (no change)
    }
    case Kind::kFinishRefused:
      for (size_t i = 0; i < s.count; ++i) {
        if (s.locs[i].serving || s.locs[i].session == op.session) return false;
      }
      return true;
    case Kind::kGet:
      for (size_t i = 0; i < s.count; ++i) {
        const Loc& loc = s.locs[i];
        if (!loc.serving) continue;
        return op.found && loc.storage == op.storage && ChecksumMatches(loc, op);
      }
      return !op.found;
    case Kind::kRemove:
      out = State{};
      return true;
  }
  return false;
}

// --- records to model ops -------------------------------------------------------------------

bool IsRefusedFinish(const HistoryRecord& r) {
  return r.op == HistoryOp::kFinishWrite && r.outcome == HistoryOutcome::kFailed &&
         r.error.find("has no location being written") != std::string::npos;
}

// The key's records as model ops (in `records` order); records that constrain nothing (failed
// calls, reads without an answer, save/load) are left out.
std::vector<Op> ToOps(const std::vector<const HistoryRecord*>& records) {
  std::unordered_map<std::string, int32_t> storages, sessions;
  auto intern = [](std::unordered_map<std::string, int32_t>& table, const std::string& name) {
    auto [it, added] = table.try_emplace(name, static_cast<int32_t>(table.size() + 1));
    (void)added;
    return it->second;
  };
  std::vector<Op> ops;
  // The session of a start_write nobody heard back from: no finish can name it, so all such
  // sessions behave alike and share one id (their states then meet in the cache).
  constexpr int32_t kUnknownSession = -1;
  for (size_t i = 0; i < records.size(); ++i) {
    const HistoryRecord& r = *records[i];
    if (!IsMetaOp(r.op)) continue;
    const bool unknown = r.outcome == HistoryOutcome::kUnknown;
    if (r.outcome == HistoryOutcome::kFailed && !IsRefusedFinish(r)) continue;
    if (r.op == HistoryOp::kGetLocation && unknown) continue;
    Op op;
    op.unknown = unknown;
    op.call_ns = r.invoke_ns;
    op.ret_ns = unknown ? kNever : r.complete_ns;
    op.record = i;
    op.found = r.found;
    op.has_checksum = r.checksum.has_value();
    op.checksum = r.checksum.value_or(0);
    op.storage = intern(storages, r.storage);
    switch (r.op) {
      case HistoryOp::kStartWrite:
        op.kind = Kind::kStart;
        op.session = unknown || r.session.empty() ? kUnknownSession : intern(sessions, r.session);
        break;
      case HistoryOp::kFinishWrite:
        op.kind = IsRefusedFinish(r) ? Kind::kFinishRefused : Kind::kFinish;
        op.session = intern(sessions, r.session);
        break;
      case HistoryOp::kGetLocation:
        op.kind = Kind::kGet;
        break;
      case HistoryOp::kRemove:
        op.kind = Kind::kRemove;
        break;
      case HistoryOp::kSave:
      case HistoryOp::kLoad:
        continue;
    }
    ops.push_back(op);
  }
  return ops;
}

// --- the search -----------------------------------------------------------------------------

// Two unknown ops that would change any state the same way.
bool SameEffect(const Op& a, const Op& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kStart:
      return a.storage == b.storage && a.session == b.session;
    case Kind::kFinish:
      return a.session == b.session && a.has_checksum == b.has_checksum && a.checksum == b.checksum;
    case Kind::kRemove:
      return true;
    case Kind::kFinishRefused:
    case Kind::kGet:
      return false;
  }
  return false;
}

struct CacheKey {
  uint64_t fp1 = 0;
  uint64_t fp2 = 0;
  uint64_t count = 0;
  State state;
  friend bool operator==(const CacheKey&, const CacheKey&) = default;
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const { return static_cast<size_t>(Mix64(k.fp1 ^ HashState(k.state)) ^ k.count); }
};

struct Entry {
  bool is_call = false;
  int64_t time = 0;
  size_t op = 0;
  Entry* match = nullptr;  // a call's return entry (none for an unknown op)
  Entry* prev = nullptr;
  Entry* next = nullptr;
};

struct SearchResult {
  KeyVerdict verdict = KeyVerdict::kLinearizable;
  uint64_t steps = 0;
};

// Removes a call entry and its return from the list (their own links are kept for Unlift).
// Removes a call entry and its return (unknown ops have none) from their list; their own links
// are kept for Unlift.
void Lift(Entry* call) {
  call->prev->next = call->next;
  if (call->next != nullptr) call->next->prev = call->prev;
  if (Entry* ret = call->match; ret != nullptr) {
    ret->prev->next = ret->next;
    if (ret->next != nullptr) ret->next->prev = ret->prev;
  }
}

void Unlift(Entry* call) {
  if (Entry* ret = call->match; ret != nullptr) {
    ret->prev->next = ret;
    if (ret->next != nullptr) ret->next->prev = ret;
  }
  call->prev->next = call;
  if (call->next != nullptr) call->next->prev = call;
}

SearchResult Search(const std::vector<Op>& ops, uint64_t max_steps) {
  SearchResult result;
  const size_t n = ops.size();
  if (n == 0) return result;
  // Definite ops: call and return events in one list, in time order; at one instant calls come
  // before returns (the recorder's stamps never tie, hand-written histories may). Unknown ops have
  // no return: their calls sit in a list of their own, tried only when no definite call can go
  // next, so the unknown ops that stay pending (most never need to apply) cost nothing per step.
  std::vector<Entry> entries(2 * n + 2);
  Entry& head = entries[2 * n];
  Entry& unknown_head = entries[2 * n + 1];
  std::vector<Entry*> order, unknown_order;
  for (size_t i = 0; i < n; ++i) {
    Entry& call = entries[2 * i];
    Entry& ret = entries[2 * i + 1];
    call = Entry{true, ops[i].call_ns, i, &ret, nullptr, nullptr};
    ret = Entry{false, ops[i].ret_ns, i, nullptr, nullptr, nullptr};
    if (ops[i].unknown) {
      call.match = nullptr;
      unknown_order.push_back(&call);
    } else {
      order.push_back(&call);
      order.push_back(&ret);
    }
  }
  auto by_time = [](const Entry* a, const Entry* b) {
    if (a->time != b->time) return a->time < b->time;
    return a->is_call && !b->is_call;
  };
  std::stable_sort(order.begin(), order.end(), by_time);
  std::stable_sort(unknown_order.begin(), unknown_order.end(), by_time);
  auto link = [](Entry& first, const std::vector<Entry*>& list) {
    Entry* prev = &first;
    for (Entry* e : list) {
      prev->next = e;
      e->prev = prev;
      prev = e;
    }
  };
  link(head, order);
  link(unknown_head, unknown_order);
  std::vector<std::pair<uint64_t, uint64_t>> zobrist(n);
  for (size_t i = 0; i < n; ++i) {
    zobrist[i] = {Mix64(0x9e3779b97f4a7c15ULL * (2 * i + 1)), Mix64(0xc2b2ae3d27d4eb4fULL * (2 * i + 2))};
  }

  // The calls that may go next: definite calls invoked before the first pending return, soonest
  // return first; then (only once those are spent) the unknown calls invoked by then. No pending
  // definite return: every definite op is linearized, and the unknown ones left never applied.
  std::vector<Entry*> candidates;
  const Entry* first_return = nullptr;
  auto collect_definite = [&] {
    candidates.clear();
    first_return = nullptr;
    for (Entry* e = head.next; e != nullptr; e = e->next) {
      if (!e->is_call) {
        first_return = e;
        break;
      }
      candidates.push_back(e);
    }
    // Lowe's just-in-time order: the op that must go first usually does, and a write is not
    // linearized ahead of the reads that still need the value before it.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const Entry* a, const Entry* b) { return a->match->time < b->match->time; });
  };
  // Pending unknown ops with the same effect are interchangeable: only the earliest invoked of
  // them may go next (any order that applies a later one could apply it instead), so k alike
  // pending ops give k choices, not 2^k subsets.
  auto collect_unknown = [&] {
    const size_t first_unknown = candidates.size();
    for (Entry* e = unknown_head.next; e != nullptr && e->time <= first_return->time; e = e->next) {
      const bool alike = std::any_of(candidates.begin() + static_cast<std::ptrdiff_t>(first_unknown), candidates.end(),
                                     [&](const Entry* c) { return SameEffect(ops[c->op], ops[e->op]); });
      if (!alike) candidates.push_back(e);
    }
  };

  struct Frame {
    Entry* call;
    State state;
    size_t index;  // of `call` among the candidates of its level
  };
  std::vector<Frame> stack;
  std::unordered_set<CacheKey, CacheKeyHash> cache;
  State state;
  uint64_t fp1 = 0, fp2 = 0;
  size_t from = 0;
  while (true) {
    collect_definite();
    if (first_return == nullptr) return result;
    bool unknown_collected = false;
    bool advanced = false;
    for (size_t k = from; !advanced; ++k) {
      if (k >= candidates.size()) {
        if (unknown_collected) break;
        collect_unknown();
        unknown_collected = true;
        if (k >= candidates.size()) break;
      }
      if (++result.steps > max_steps) {
        result.verdict = KeyVerdict::kUnknownBudget;
        return result;
      }
      Entry* call = candidates[k];
      const size_t i = call->op;
      State next;
      // An unknown op that changes nothing here is better left for later (or never): skipping it
      // drops only a branch that keeping it pending dominates.
      if (!Step(state, ops[i], next) || (ops[i].unknown && next == state)) continue;
      CacheKey key{fp1 ^ zobrist[i].first, fp2 ^ zobrist[i].second, stack.size() + 1, next};
      if (!cache.insert(key).second) continue;
      stack.push_back(Frame{call, state, k});
      state = next;
      fp1 = key.fp1;
      fp2 = key.fp2;
      Lift(call);
      advanced = true;
    }
    if (advanced) {
      from = 0;
      continue;
    }
    // No call can go next: undo the latest choice and try the one after it.
    if (stack.empty()) {
      result.verdict = KeyVerdict::kNotLinearizable;
      return result;
    }
    const Frame top = stack.back();
    stack.pop_back();
    state = top.state;
    fp1 ^= zobrist[top.call->op].first;
    fp2 ^= zobrist[top.call->op].second;
    Unlift(top.call);
    from = top.index + 1;
  }
}

// Whether `ops[drop]` may leave the sub-history `kept` without leaving a kept op reading a value
// nobody wrote (the explanation must keep the write a read saw).
bool Droppable(const std::vector<Op>& ops, const std::vector<size_t>& kept, size_t drop) {
  const Op& d = ops[drop];
  for (size_t k : kept) {
    if (k == drop) continue;
    const Op& o = ops[k];
    if (d.kind == Kind::kStart && !d.found && (o.kind == Kind::kFinish || o.kind == Kind::kFinishRefused) &&
        o.session == d.session) {
      return false;
    }
    if (d.kind == Kind::kFinish && (o.kind == Kind::kGet || o.kind == Kind::kStart) && o.found &&
        o.has_checksum == d.has_checksum && o.checksum == d.checksum) {
      return false;
    }
  }
  return true;
}

std::vector<Op> Subset(const std::vector<Op>& ops, const std::vector<size_t>& kept) {
  std::vector<Op> out;
  out.reserve(kept.size());
  for (size_t k : kept) out.push_back(ops[k]);
  return out;
}

// Greedy: drop each op in turn while the rest stays non-linearizable, within `budget` steps.
std::vector<size_t> Shrink(const std::vector<Op>& ops, uint64_t max_steps, uint64_t budget) {
  std::vector<size_t> kept(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) kept[i] = i;
  for (size_t pos = 0; pos < kept.size() && budget > 0;) {
    const size_t drop = kept[pos];
    if (!Droppable(ops, kept, drop)) {
      ++pos;
      continue;
    }
    std::vector<size_t> candidate = kept;
    candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(pos));
    const SearchResult r = Search(Subset(ops, candidate), std::min(max_steps, budget));
    budget -= std::min(budget, r.steps);
    if (r.verdict == KeyVerdict::kNotLinearizable) {
      kept = std::move(candidate);
    } else {
      ++pos;
    }
  }
  return kept;
}

// --- invariants -----------------------------------------------------------------------------

// The meta records of each key, keys in order, each list in recording order (what the search
// takes). Grouped through a hash of views: a history holds tens of thousands of records.
using KeyLists = std::vector<std::pair<std::string_view, std::vector<const HistoryRecord*>>>;
KeyLists GroupByKey(std::span<const HistoryRecord> records) {
  std::unordered_map<std::string_view, size_t> slot_of;
  KeyLists out;
  for (const HistoryRecord& r : records) {
    if (!IsMetaOp(r.op)) continue;
    auto [it, fresh] = slot_of.try_emplace(r.key, out.size());
    if (fresh) out.emplace_back(r.key, std::vector<const HistoryRecord*>());
    out[it->second].second.push_back(&r);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

// One key's records by invoke time (ties in recording order): what the invariants walk.
std::vector<const HistoryRecord*> ByInvoke(std::vector<const HistoryRecord*> list) {
  std::stable_sort(list.begin(), list.end(),
                   [](const HistoryRecord* a, const HistoryRecord* b) { return a->invoke_ns < b->invoke_ns; });
  return list;
}

bool IsOk(const HistoryRecord& r, HistoryOp op) { return r.op == op && r.outcome == HistoryOutcome::kOk; }

// What the invariants ask of one key, indexed so each question costs a lookup, not a scan.
struct KeyIndex {
  // Removes (acknowledged or unknown) by invoke time, with the latest effective end so far.
  std::vector<int64_t> remove_invoke;
  std::vector<int64_t> remove_end_max;
  // Per value written (checksum; nullopt: none): finishes that may have applied, their earliest
  // invoke and latest effective end.
  struct Writes {
    int64_t count = 0;
    int64_t first_invoke = kNever;
    int64_t last_end = std::numeric_limits<int64_t>::min();
  };
  std::map<std::optional<int64_t>, Writes> writes;

  explicit KeyIndex(const std::vector<const HistoryRecord*>& list) {
    std::vector<std::pair<int64_t, int64_t>> removes;
    for (const HistoryRecord* r : list) {
      if (r->outcome == HistoryOutcome::kFailed) continue;
      if (r->op == HistoryOp::kRemove) removes.emplace_back(r->invoke_ns, EffectiveComplete(*r));
      if (r->op == HistoryOp::kFinishWrite) {
        Writes& w = writes[r->checksum];
        ++w.count;
        w.first_invoke = std::min(w.first_invoke, r->invoke_ns);
        w.last_end = std::max(w.last_end, EffectiveComplete(*r));
      }
    }
    std::sort(removes.begin(), removes.end());
    int64_t end_max = std::numeric_limits<int64_t>::min();
    for (const auto& [invoke, end] : removes) {
      end_max = std::max(end_max, end);
      remove_invoke.push_back(invoke);
      remove_end_max.push_back(end_max);
    }
  }

  // A remove that may have taken effect inside [after, before] (meeting at an instant: concurrent).
  bool RemoveBetween(int64_t after_ns, int64_t before_ns) const {
    const size_t n = static_cast<size_t>(std::upper_bound(remove_invoke.begin(), remove_invoke.end(), before_ns) -
                                         remove_invoke.begin());
    return n > 0 && remove_end_max[n - 1] >= after_ns;
  }
  // Finishes of `value` other than `self` (when self writes that value).
  int64_t OtherWritesOf(const std::optional<int64_t>& value, bool self_writes_it) const {
    auto it = writes.find(value);
    return it == writes.end() ? 0 : it->second.count - (self_writes_it ? 1 : 0);
  }
};

bool SameValue(const HistoryRecord& a, const HistoryRecord& b) { return a.checksum == b.checksum; }

std::string ChecksumText(const std::optional<int64_t>& checksum) {
  if (!checksum) return "no checksum";
  char text[32];
  std::snprintf(text, sizeof text, "crc=%016llx", static_cast<unsigned long long>(*checksum));
  return text;
}

std::string Ms(int64_t ns) {
  if (ns == kNever) return "never";
  char text[32];
  std::snprintf(text, sizeof text, "%.6fms", static_cast<double>(ns) / 1e6);  // ns: stamps 1 ns apart stay apart
  return text;
}

}  // namespace

const char* KeyVerdictName(KeyVerdict verdict) {
  switch (verdict) {
    case KeyVerdict::kLinearizable:
      return "linearizable";
    case KeyVerdict::kNotLinearizable:
      return "not linearizable";
    case KeyVerdict::kUnknownBudget:
      return "unknown (budget)";
  }
  return "?";
}

namespace {

KeyCheck CheckKey(const std::vector<const HistoryRecord*>& records, uint64_t max_steps, uint64_t shrink_steps) {
  KeyCheck check;
  const std::vector<Op> ops = ToOps(records);
  const SearchResult r = Search(ops, max_steps);
  check.verdict = r.verdict;
  check.steps = r.steps;
  if (r.verdict != KeyVerdict::kNotLinearizable) return check;
  const std::vector<size_t> kept = shrink_steps > 0 ? Shrink(ops, max_steps, shrink_steps) : [&] {
    std::vector<size_t> all(ops.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }();
  for (size_t k : kept) check.anomaly.push_back(*records[ops[k].record]);
  return check;
}

// The invariants of one key, over its records by invoke time; each appends at most one finding.
// The last successful read of the key; every acknowledged write that ended before it began must
// be there, unless a remove may have come after the write.
void LostWriteOf(std::string_view key, const std::vector<const HistoryRecord*>& list, const KeyIndex& index,
                 std::vector<InvariantFinding>& out) {
  const HistoryRecord* last = nullptr;
  for (const HistoryRecord* r : list) {
    if (IsOk(*r, HistoryOp::kGetLocation)) last = r;
  }
  if (last == nullptr || last->found) return;
  for (const HistoryRecord* write : list) {
    if (!IsOk(*write, HistoryOp::kFinishWrite) || write->complete_ns >= last->invoke_ns) continue;
    if (index.RemoveBetween(write->invoke_ns, last->complete_ns)) continue;
    out.push_back({"no_lost_writes", std::string(key), last->client,
                   "the write acknowledged at " + Ms(write->complete_ns) + " (session " + write->session +
                       ") is gone: the last read, at " + Ms(last->invoke_ns) + ", found no location",
                   {*write, *last}});
    return;  // one finding per key
  }
}

void NonMonotonicReadOf(std::string_view key, const std::vector<const HistoryRecord*>& list, const KeyIndex& index,
                        std::vector<InvariantFinding>& out) {
  std::map<std::string, const HistoryRecord*> last_found;  // client -> its latest read with a value
  for (const HistoryRecord* r : list) {
    if (!IsOk(*r, HistoryOp::kGetLocation)) continue;
    auto it = last_found.find(r->client);
    if (it != last_found.end() && r->invoke_ns >= it->second->complete_ns) {
      const HistoryRecord& before = *it->second;
      std::string what;
      if (!r->found && !index.RemoveBetween(before.invoke_ns, r->complete_ns)) {
        what = "read " + ChecksumText(before.checksum) + " at " + Ms(before.invoke_ns) + ", then no location at " +
               Ms(r->invoke_ns) + " with no remove between";
      } else if (r->found && !SameValue(before, *r)) {
        // Going back: every write of the new value ended before any write of the old one began.
        auto now = index.writes.find(r->checksum);
        auto old = index.writes.find(before.checksum);
        if (now != index.writes.end() && old != index.writes.end() && now->second.last_end < old->second.first_invoke) {
          what = "read " + ChecksumText(before.checksum) + " at " + Ms(before.invoke_ns) + ", then the older " +
                 ChecksumText(r->checksum) + " at " + Ms(r->invoke_ns);
        }
      }
      if (!what.empty()) {
        out.push_back({"monotonic_reads", std::string(key), r->client, what, {before, *r}});
        return;  // one finding per key
      }
    }
    if (r->found) last_found[r->client] = r;
  }
}

void UnreadWriteOf(std::string_view key, const std::vector<const HistoryRecord*>& list, const KeyIndex& index,
                   std::vector<InvariantFinding>& out) {
  std::map<std::string, const HistoryRecord*> last_write;  // client -> its latest acknowledged finish
  for (const HistoryRecord* r : list) {
    if (IsOk(*r, HistoryOp::kFinishWrite)) {
      last_write[r->client] = r;
      continue;
    }
    if (!IsOk(*r, HistoryOp::kGetLocation)) continue;
    auto it = last_write.find(r->client);
    if (it == last_write.end() || r->invoke_ns < it->second->complete_ns) continue;
    const HistoryRecord& write = *it->second;
    if (r->found && r->checksum == write.checksum) continue;
    if (index.RemoveBetween(write.invoke_ns, r->complete_ns)) continue;
    // Another writer's value explains a different answer.
    if (r->found && index.OtherWritesOf(r->checksum, r->checksum == write.checksum) > 0) continue;
    out.push_back({"read_your_writes", std::string(key), r->client,
                   "finished a write (" + ChecksumText(write.checksum) + ") at " + Ms(write.complete_ns) +
                       ", then read " + (r->found ? ChecksumText(r->checksum) : std::string("no location")) + " at " +
                       Ms(r->invoke_ns),
                   {write, *r}});
    return;  // one finding per key
  }
}

using KeyInvariant = void (*)(std::string_view, const std::vector<const HistoryRecord*>&, const KeyIndex&,
                              std::vector<InvariantFinding>&);

std::vector<InvariantFinding> CheckEachKey(std::span<const HistoryRecord> records, KeyInvariant invariant) {
  std::vector<InvariantFinding> out;
  for (const auto& [key, recorded] : GroupByKey(records)) {
    const std::vector<const HistoryRecord*> list = ByInvoke(recorded);
    invariant(key, list, KeyIndex(list), out);
  }
  return out;
}

}  // namespace

KeyCheck CheckKeyLinearizable(std::span<const HistoryRecord> ops, uint64_t max_steps) {
  std::vector<const HistoryRecord*> records;
  records.reserve(ops.size());
  for (const HistoryRecord& r : ops) records.push_back(&r);
  return CheckKey(records, max_steps, 2 * max_steps);
}

std::vector<InvariantFinding> CheckNoLostWrites(std::span<const HistoryRecord> records) {
  return CheckEachKey(records, LostWriteOf);
}

std::vector<InvariantFinding> CheckMonotonicReads(std::span<const HistoryRecord> records) {
  return CheckEachKey(records, NonMonotonicReadOf);
}

std::vector<InvariantFinding> CheckReadYourWrites(std::span<const HistoryRecord> records) {
  return CheckEachKey(records, UnreadWriteOf);
}

std::string DescribeOp(const HistoryRecord& r) {
  std::string out = "t=" + Ms(r.invoke_ns) + ".." +
                    (r.outcome == HistoryOutcome::kUnknown ? std::string("?") : Ms(r.complete_ns)) +
                    " client=" + r.client + " " + HistoryOpName(r.op) + " " + r.key;
  switch (r.op) {
    case HistoryOp::kStartWrite:
      out += " -> session " + (r.session.empty() ? std::string("?") : r.session) + (r.found ? " (cached)" : "");
      break;
    case HistoryOp::kFinishWrite:
      out += " session " + r.session + " " + ChecksumText(r.checksum);
      break;
    case HistoryOp::kGetLocation:
      out += r.found ? " -> " + r.storage + " " + ChecksumText(r.checksum) : " -> none";
      break;
    case HistoryOp::kSave:
    case HistoryOp::kLoad:
      if (r.version >= 0) out += " v" + std::to_string(r.version);
      break;
    case HistoryOp::kRemove:
      break;
  }
  out += std::string(" (") + HistoryOutcomeName(r.outcome);
  if (!r.error.empty()) out += ": " + r.error;
  // Who served it: "served by n2 in term 7" (a read names both; a write's session names its term).
  if (!r.node.empty()) {
    out += ", served by " + r.node;
    if (r.term >= 0) out += " in term " + std::to_string(r.term);
  } else if (r.term >= 0) {
    out += ", term " + std::to_string(r.term);
  }
  return out + ")";
}

std::string OpValueText(const HistoryRecord& r) {
  switch (r.op) {
    case HistoryOp::kStartWrite:
      if (r.found) return "cached " + ChecksumText(r.checksum);
      return r.session.empty() ? std::string() : "session " + r.session;
    case HistoryOp::kFinishWrite:
      return ChecksumText(r.checksum);
    case HistoryOp::kGetLocation:
      if (r.outcome != HistoryOutcome::kOk) return "";
      return r.found ? ChecksumText(r.checksum) : "none";
    case HistoryOp::kSave:
    case HistoryOp::kLoad:
      return r.version >= 0 ? "v" + std::to_string(r.version) : "";
    case HistoryOp::kRemove:
      break;
  }
  return "";
}

std::string HistoryCheck::Verdict() const {
  if (keys_not_linearizable > 0) return KeyVerdictName(KeyVerdict::kNotLinearizable);
  if (keys_unknown_budget > 0) return KeyVerdictName(KeyVerdict::kUnknownBudget);
  return KeyVerdictName(KeyVerdict::kLinearizable);
}

std::string HistoryCheck::FirstAnomaly() const {
  for (const KeyFailure& f : failures) {
    if (f.verdict != KeyVerdict::kNotLinearizable) continue;
    std::string out = "key '" + f.key + "' is not linearizable:";
    for (const HistoryRecord& r : f.anomaly) out += " [" + DescribeOp(r) + "]";
    return out;
  }
  for (const std::vector<InvariantFinding>* list : {&lost_writes, &non_monotonic_reads, &read_your_writes}) {
    if (!list->empty()) {
      const InvariantFinding& f = list->front();
      return f.invariant + ": key '" + f.key + "', client " + f.client + ": " + f.what;
    }
  }
  if (!budget_keys.empty()) return "key '" + budget_keys.front() + "': unknown (budget): the search ran out of steps";
  return "";
}

HistorySummary Summarize(const HistoryCheck& check) {
  HistorySummary s;
  s.checked = true;
  s.operations = check.operations;
  s.keys = check.keys;
  s.verdict = check.Verdict();
  s.keys_not_linearizable = check.keys_not_linearizable;
  s.keys_unknown_budget = check.keys_unknown_budget;
  s.lost_writes = check.lost_writes.size();
  s.non_monotonic_reads = check.non_monotonic_reads.size();
  s.read_your_writes = check.read_your_writes.size();
  s.check_ms = check.check_ms;
  s.first_anomaly = check.FirstAnomaly();
  for (const KeyFailure& f : check.failures) {
    if (f.verdict != KeyVerdict::kNotLinearizable) continue;
    s.anomaly_key = f.key;
    for (const HistoryRecord& r : f.anomaly) s.anomaly.push_back(DescribeOp(r));
    s.anomaly_ops = f.anomaly;
    break;
  }
  return s;
}

HistoryCheck CheckHistory(std::span<const HistoryRecord> records, const HistoryCheckOptions& options) {
  // Host time, a speed figure outside the trace: read through the real runtime (DESIGN.md).
  Runtime& host = Runtime::Real();
  const MonoTime start = host.Now();
  HistoryCheck check;
  // Grouped once: the search and the three invariants walk the same keys.
  const KeyLists by_key = GroupByKey(records);
  for (const auto& [key, list] : by_key) check.operations += list.size();
  check.keys = by_key.size();
  std::vector<KeyFailure> budget_failures;
  for (const auto& [key, list] : by_key) {
    const bool explain = check.keys_not_linearizable < options.max_anomalies;
    const KeyCheck k = CheckKey(list, options.max_steps_per_key, explain ? options.shrink_steps_per_key : 0);
    check.steps += k.steps;
    if (k.verdict == KeyVerdict::kNotLinearizable) {
      if (explain) check.failures.push_back({std::string(key), k.verdict, k.anomaly});
      ++check.keys_not_linearizable;
    } else if (k.verdict == KeyVerdict::kUnknownBudget) {
      ++check.keys_unknown_budget;
      check.budget_keys.emplace_back(key);
      if (budget_failures.size() < options.max_anomalies) budget_failures.push_back({std::string(key), k.verdict, {}});
    }
    const std::vector<const HistoryRecord*> by_invoke = ByInvoke(list);
    const KeyIndex index(by_invoke);
    LostWriteOf(key, by_invoke, index, check.lost_writes);
    NonMonotonicReadOf(key, by_invoke, index, check.non_monotonic_reads);
    UnreadWriteOf(key, by_invoke, index, check.read_your_writes);
  }
  for (KeyFailure& f : budget_failures) check.failures.push_back(std::move(f));
  check.check_ms = std::chrono::duration<double, std::milli>(host.Now() - start).count();
  return check;
}

}  // namespace kvchaos::sim
