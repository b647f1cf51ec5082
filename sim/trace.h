// Trace: the record of one simulated run, one event per scheduling decision, timer, message,
// fault and observation. Every event folds into a running 64-bit hash (integers and strings
// only, never pointers), and every `checkpoint_every` events the hash is kept as a checkpoint,
// so two runs of one seed can be compared cheaply and the first diverging window found. Text
// lines are produced only when asked for (a sink, or a capture window of event numbers), so a
// run without them pays for the hash alone.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kvchaos::sim {

// FNV-1a, the same function as kvchaos::HashName, usable at compile time.
constexpr uint64_t TraceHash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// An event tag with its hash computed once (hot call sites declare them static constexpr).
struct TraceTag {
  constexpr explicit TraceTag(std::string_view tag) : name(tag), hash(TraceHash(tag)) {}
  std::string_view name;
  uint64_t hash;
};

class Trace {
 public:
  explicit Trace(uint64_t checkpoint_every = 4096);

  // Folds one event into the hash. `node` < 0 means none (the scheduler, the backend).
  // `thread` is a thread's sequence number (0: none), `what` a short fixed tag, a/b arguments.
  // `describe` turns the event into text and is only called when text is wanted.
  void Event(int64_t t_ns, int node, uint64_t thread, std::string_view what, int64_t a = 0, int64_t b = 0,
             std::string_view detail = {}) {
    Record(t_ns, node, thread, what, TraceHash(what), a, b, detail, detail.empty() ? 0 : TraceHash(detail));
  }
  // The same with tags hashed beforehand (the scheduler's and the network's hot paths).
  void Event(int64_t t_ns, int node, uint64_t thread, const TraceTag& what, int64_t a = 0, int64_t b = 0,
             const TraceTag* detail = nullptr) {
    Record(t_ns, node, thread, what.name, what.hash, a, b, detail ? detail->name : std::string_view(),
           detail ? detail->hash : 0);
  }

  uint64_t hash() const { return hash_; }
  uint64_t events() const { return events_; }
  const std::vector<uint64_t>& checkpoints() const { return checkpoints_; }
  uint64_t checkpoint_every() const { return checkpoint_every_; }

  // Every event's text line goes to `sink` (e.g. a --trace file).
  void SetSink(std::function<void(std::string_view line)> sink) { sink_ = std::move(sink); }
  // Keeps the text of events numbered [begin, end) (0-based) in captured().
  void CaptureWindow(uint64_t begin, uint64_t end) {
    capture_begin_ = begin;
    capture_end_ = end;
  }
  const std::vector<std::string>& captured() const { return captured_; }
  // Names for node and thread numbers in text lines.
  void SetNamer(std::function<std::string(int node, uint64_t thread)> namer) { namer_ = std::move(namer); }

  static std::string FormatLine(uint64_t index, int64_t t_ns, std::string_view node_thread, std::string_view what,
                                int64_t a, int64_t b, std::string_view detail);

 private:
  void Record(int64_t t_ns, int node, uint64_t thread, std::string_view what, uint64_t what_hash, int64_t a,
              int64_t b, std::string_view detail, uint64_t detail_hash);

  uint64_t checkpoint_every_;
  uint64_t hash_ = 0x6b766368616f73ULL;  // "kvchaos"
  uint64_t events_ = 0;
  uint64_t until_checkpoint_;  // events left before the next checkpoint (no division per event)
  std::vector<uint64_t> checkpoints_;
  std::function<void(std::string_view)> sink_;
  std::function<std::string(int, uint64_t)> namer_;
  uint64_t capture_begin_ = 0;
  uint64_t capture_end_ = 0;
  std::vector<std::string> captured_;
};

}  // namespace kvchaos::sim
