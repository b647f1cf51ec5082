// Linearizability of the metadata map, checked from a history (sim/history.h), key by key, against
// a sequential model of the meta API (docs/history.md writes the model down; it follows
// core/meta/cache_manager.cc):
//
//   state of a key: its locations in stored order, each {storage, writing(session) | serving(checksum)}
//   start_write(storage) -> session S: a serving location on the storage answers "cached" with it and
//                           changes nothing; else the storage's location becomes writing(S)
//   finish_write(S, X)   -> the location writing(S) becomes serving(X); none but some serving: ok,
//                           no change; neither: InvalidArgument ("no location being written")
//   get_location         -> the first serving location (storage, checksum), or none
//   remove               -> no locations
//
// The search is Wing & Gong's, with Lowe's memoisation (as Porcupine and Knossos do it): a DFS that
// linearizes a call invoked before the first pending return (soonest return first) and undoes the
// latest choice when none can go, with a cache of (set of linearized ops, model state) already seen.
// The set is kept as a 128-bit Zobrist fingerprint plus its size (exact up to a 2^-128 collision),
// so the cache costs the same for 10 ops as for 10^6. Unknown-outcome ops are invoked but never
// return: they may take effect at any point after their invoke, or never (the search succeeds once
// every op with a known outcome is linearized). Failed ops took no effect and constrain nothing,
// except a finish_write answered "no location being written", which observed the state.
//
// Each key has a budget of search steps; past it the key's verdict is "unknown (budget)". A key that
// is not linearizable is explained by its smallest failing sub-history found by a greedy shrink
// (drop an op while the rest stays non-linearizable; never the write a kept op read from).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/history.h"

namespace kvchaos::sim {

enum class KeyVerdict : uint8_t { kLinearizable, kNotLinearizable, kUnknownBudget };
// "linearizable", "not linearizable", "unknown (budget)".
const char* KeyVerdictName(KeyVerdict verdict);

struct KeyCheck {
  KeyVerdict verdict = KeyVerdict::kLinearizable;
  uint64_t steps = 0;                   // search steps spent (without the shrink)
  std::vector<HistoryRecord> anomaly;   // not linearizable: the smallest failing sub-history found
};

// Checks the meta ops of one key (save/load records are ignored). `max_steps` bounds the search.
KeyCheck CheckKeyLinearizable(std::span<const HistoryRecord> ops, uint64_t max_steps);

// One finding of a cheap invariant, with the operations that show it.
struct InvariantFinding {
  std::string invariant;  // "no_lost_writes", "monotonic_reads", "read_your_writes"
  std::string key;
  std::string client;
  std::string what;       // one sentence
  std::vector<HistoryRecord> ops;
};

// No acknowledged write lost: the last successful read of a key after an acknowledged
// finish_write finds a location, unless a remove may have come after the write.
std::vector<InvariantFinding> CheckNoLostWrites(std::span<const HistoryRecord> records);
// A client's successive reads of a key never go back: not to "none" after a value unless a remove
// may have come between, never to a value whose write ended before the earlier value's began.
std::vector<InvariantFinding> CheckMonotonicReads(std::span<const HistoryRecord> records);
// A client that finished a write reads it (or something a concurrent or later write or remove
// explains) in every later read of the key, across failovers.
std::vector<InvariantFinding> CheckReadYourWrites(std::span<const HistoryRecord> records);

struct HistoryCheckOptions {
  uint64_t max_steps_per_key = 1'000'000;
  uint64_t shrink_steps_per_key = 2'000'000;  // over all the shrink's searches of a key
  size_t max_anomalies = 3;                   // keys explained in detail (all are counted)
};

struct KeyFailure {
  std::string key;
  KeyVerdict verdict = KeyVerdict::kNotLinearizable;
  std::vector<HistoryRecord> anomaly;  // empty for a budget verdict
};

struct HistoryCheck {
  uint64_t operations = 0;  // meta ops checked
  uint64_t keys = 0;
  uint64_t keys_not_linearizable = 0;
  uint64_t keys_unknown_budget = 0;
  uint64_t steps = 0;
  std::vector<KeyFailure> failures;  // first max_anomalies not-linearizable keys, then budget keys (by key)
  std::vector<std::string> budget_keys;  // every key whose verdict is unknown (budget)
  std::vector<InvariantFinding> lost_writes;
  std::vector<InvariantFinding> non_monotonic_reads;
  std::vector<InvariantFinding> read_your_writes;
  double check_ms = 0;  // wall time of the check (not deterministic)

  // "linearizable", "not linearizable", or "unknown (budget)" (no key failed, some ran out).
  std::string Verdict() const;
  // One line on the first anomaly ("" when none): the key and its ops, or the first finding.
  std::string FirstAnomaly() const;
};

HistoryCheck CheckHistory(std::span<const HistoryRecord> records, const HistoryCheckOptions& options = {});

// What a run reports of its history check (SimResult, the run result).
struct HistorySummary {
  bool checked = false;
  uint64_t operations = 0;
  uint64_t keys = 0;
  std::string verdict;  // HistoryCheck::Verdict()
  uint64_t keys_not_linearizable = 0;
  uint64_t keys_unknown_budget = 0;
  uint64_t lost_writes = 0;          // findings of no_lost_writes
  uint64_t non_monotonic_reads = 0;  // of monotonic_reads
  uint64_t read_your_writes = 0;     // of read_your_writes
  double check_ms = 0;
  std::string first_anomaly;         // "" when none
  std::string anomaly_key;           // the first non-linearizable key, and its smallest failing ops
  std::vector<std::string> anomaly;  // one DescribeOp line per op
  std::vector<HistoryRecord> anomaly_ops;  // the same ops as records (the report's timeline chart)
};
HistorySummary Summarize(const HistoryCheck& check);

// "t=12.345678ms..12.501234ms client=kvc_load0 get_location k3.v1 -> sim crc=... (ok, term 7)": one op
// as the console and reports show it.
std::string DescribeOp(const HistoryRecord& r);
// What an op wrote or read, short: "crc=…" (finish_write, a found get_location), "none",
// "session ws-7-3" (start_write), "cached crc=…", "v2" (save/load), "" (remove).
std::string OpValueText(const HistoryRecord& r);

}  // namespace kvchaos::sim
