// Progress of `kvchaos run` while its runs execute: on a terminal one line redrawn in place (a bar,
// done/total, failures so far, ETA and the run just finished), with each failure printed above it
// as it happens together with its repro command; elsewhere (CI logs, pipes) one plain line per
// finished run, so logs stay readable and greppable.
//
// Finished() may be called from several worker threads; lines never interleave. The clock is
// injected so tests can drive the ETA.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>

#include "harness/run_result.h"

namespace kvchaos::harness {

class ProgressReporter {
 public:
  // `now_s` returns seconds on a monotonic clock.
  ProgressReporter(std::ostream& out, size_t total, bool terminal, std::function<double()> now_s);

  void Finished(const RunResult& result);
  // Any other finished item (`kvchaos sim`'s seeds): `name` says which ("seed 17"), `verdict` how
  // it ended ("PASS", "FAIL"), `repro` the command that replays it ("" when it passed).
  void Finished(const std::string& name, std::string_view verdict, bool failed, const std::string& repro);
  // Writes `text` (whole lines): above the bar on a terminal, as is elsewhere.
  void Print(const std::string& text);
  // Ends the progress line (terminal mode) so what follows starts on a fresh line.
  void Done();

  // "45s", "3m07s", "1h02m": the ETA's form.
  static std::string FormatEta(double seconds);

 private:
  void DrawBar(const std::string& last);

  std::ostream& out_;
  const size_t total_;
  const bool terminal_;
  const std::function<double()> now_s_;
  const double start_s_;
  std::mutex mutex_;
  size_t done_ = 0;
  size_t failed_ = 0;
  bool bar_drawn_ = false;
  std::string last_;  // the item the bar names
};

// True when standard output is a terminal (progress bar) rather than a file or pipe (plain lines).
bool StdoutIsTerminal();

}  // namespace kvchaos::harness
