// Progress display for scenario runs (see progress.h).
#include "harness/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvchaos::harness {
namespace {

constexpr size_t kBarWidth = 30;

std::string RunName(const RunResult& r) {
  // A file of both modes runs each seed twice: the line says which.
  return r.scenario_name + (r.both_modes ? " (" + r.mode + ")" : "") + " seed " + std::to_string(r.seed);
}

}  // namespace

ProgressReporter::ProgressReporter(std::ostream& out, size_t total, bool terminal, std::function<double()> now_s)
    : out_(out), total_(total), terminal_(terminal), now_s_(std::move(now_s)), start_s_(now_s_()) {}

std::string ProgressReporter::FormatEta(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%llds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  }
  return buf;
}

void ProgressReporter::Finished(const RunResult& result) {
  const bool failed = !result.passed() && !result.interrupted;
  const std::string verdict = result.passed() ? "PASS" : result.interrupted ? "STOPPED" : (result.error.empty() ? "FAIL" : "ERROR");
  // An interrupted run has nothing to reproduce: it was stopped, not failed.
  Finished(RunName(result), verdict, !result.passed(), failed ? result.ReproCommand() : std::string());
}

void ProgressReporter::Finished(const std::string& name, std::string_view verdict, bool failed,
                                const std::string& repro) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  if (failed) ++failed_;
  if (!terminal_) {
    const int width = static_cast<int>(std::to_string(total_).size());
    char count[64];
    std::snprintf(count, sizeof(count), "[%*zu/%zu]", width, done_, total_);
    out_ << count << " " << verdict << " " << name;
    if (!repro.empty()) out_ << " — reproduce: " << repro;
    out_ << "\n" << std::flush;
    return;
  }
  if (failed) {
    // Clear the bar, print the failure on its own line, then redraw the bar below it.
    out_ << "\r\x1b[2K" << verdict << " " << name;
    if (!repro.empty()) out_ << " — reproduce: " << repro;
    out_ << "\n";
  }
  DrawBar(name);
}

void ProgressReporter::Print(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (terminal_ && bar_drawn_) out_ << "\r\x1b[2K";
  out_ << text << std::flush;
  if (terminal_ && bar_drawn_) DrawBar(last_);
}

void ProgressReporter::DrawBar(const std::string& last) {
  last_ = last;
  const double fraction = total_ == 0 ? 1.0 : static_cast<double>(done_) / static_cast<double>(total_);
  const auto filled = static_cast<size_t>(fraction * kBarWidth);
  std::string bar(filled, '#');
  bar += std::string(kBarWidth - filled, '-');
  const double elapsed = now_s_() - start_s_;
  const double eta = done_ == 0 ? 0 : elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
  out_ << "\r\x1b[2K[" << bar << "] " << done_ << "/" << total_ << "  " << failed_ << " failed  ETA "
       << FormatEta(eta) << "  " << last << std::flush;
  bar_drawn_ = true;
}

void ProgressReporter::Done() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (terminal_ && bar_drawn_) out_ << "\n" << std::flush;
  bar_drawn_ = false;
}

bool StdoutIsTerminal() { return ::isatty(STDOUT_FILENO) == 1; }

}  // namespace kvchaos::harness
