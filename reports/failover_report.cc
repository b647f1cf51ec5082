// Failover report rendering and writing (see failover_report.h).
#include "reports/failover_report.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/json_text.h"
#include "harness/junit_writer.h"
#include "reports/charts.h"
#include "reports/svg.h"

namespace kvchaos::reports {
namespace {

namespace fs = std::filesystem;
using harness::RunResult;
using harness::XmlEscape;

std::string Ms(double v) { return Num(v, 1); }

std::string Bound(const ClassStats& c) { return c.bound_ms ? std::to_string(*c.bound_ms) : "-"; }

std::string WithinBound(const ClassStats& c) {
  if (!c.bound_ms) return "-";
  return c.p99 <= static_cast<double>(*c.bound_ms) ? "yes" : "NO";
}

std::string FailedChecks(const RunResult& r) {
  std::string names;
  for (const harness::InvariantVerdict& v : r.verdicts) {
    if (!v.passed) names += (names.empty() ? "" : ", ") + v.name + " (" + v.detail + ")";
  }
  if (!r.error.empty()) names += (names.empty() ? "" : ", ") + std::string("error: ") + r.error;
  return names;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Markdown table cells must not break the table.
std::string Cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

Status WriteFile(const fs::path& path, const std::string& content) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError("report: cannot create '" + tmp.string() + "'", errno);
    out << content;
    out.flush();
    if (!out) return Status::IoError("report: write to '" + tmp.string() + "' failed", errno);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Status::IoError("report: rename to '" + path.string() + "' failed: " + ec.message(), ec.value());
  return Status::Ok();
}

bool LooksLikeResult(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return false;
  auto it = j.find("format");
  return it != j.end() && it->is_string() && it->get<std::string>().rfind("kvchaos-result/", 0) == 0;
}

}  // namespace

Result<std::vector<RunResult>> LoadResults(const std::vector<std::string>& paths, std::vector<std::string>* skipped) {
  std::vector<RunResult> results;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return Status::NotFound(path + ": no such file or directory");
    if (!fs::is_directory(path, ec)) {
      Result<RunResult> r = harness::ReadRunResult(path);
      if (!r.ok()) return r.status();
      results.push_back(std::move(*r));
      continue;
    }
    std::vector<std::string> files;
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path().string());
    }
    if (ec) return Status::IoError(path + ": cannot list directory: " + ec.message(), ec.value());
    std::sort(files.begin(), files.end());
    for (const std::string& file : files) {
      if (!LooksLikeResult(file)) {
        if (skipped != nullptr) skipped->push_back(file + ": not a kvchaos result file, skipped");
        continue;
      }
      Result<RunResult> r = harness::ReadRunResult(file);
      if (!r.ok()) return r.status();
      results.push_back(std::move(*r));
    }
  }
  return results;
}

Result<const RunResult*> ChooseTimelineRun(const std::vector<RunResult>& results, const std::string& selector) {
  if (!selector.empty()) {
    const size_t colon = selector.rfind(':');
    if (colon == std::string::npos) {
      return Status::InvalidArgument("--timeline '" + selector + "': expected <scenario>:<seed>");
    }
    const std::string name = selector.substr(0, colon);
    const std::string seed = selector.substr(colon + 1);
    for (const RunResult& r : results) {
      if (r.scenario_name == name && std::to_string(r.seed) == seed) return &r;
    }
    return Status::NotFound("--timeline '" + selector + "': no run of scenario '" + name + "' with seed " + seed +
                            " among the results");
  }
  const RunResult* chosen = nullptr;
  for (const RunResult& r : results) {
    if (!r.passed()) return &r;
  }
  double slowest = -1;
  for (const RunResult& r : results) {
    for (const harness::FailoverEvent& f : r.failovers) {
      if (f.failover_ms() > slowest) {
        slowest = f.failover_ms();
        chosen = &r;
      }
    }
  }
  if (chosen == nullptr && !results.empty()) chosen = &results.front();
  return chosen;
}

std::string SeedRanges(const std::vector<uint64_t>& seeds) {
  std::string out;
  for (size_t i = 0; i < seeds.size();) {
    size_t j = i;
    while (j + 1 < seeds.size() && seeds[j + 1] == seeds[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(seeds[i]);
    if (j > i) out += "-" + std::to_string(seeds[j]);
    i = j + 1;
  }
  return out.empty() ? "-" : out;
}

std::string RenderMarkdown(const FailoverSummary& s, const RunResult* timeline) {
  std::ostringstream md;
  md << "# Failover report\n\n";
  md << "- Runs: " << s.runs << " (" << s.failed_runs << " failed), failovers: " << s.failovers << "\n";
  md << "- Seeds: " << SeedRanges(s.seeds) << "\n";
  md << "- Builds: " << (s.build_ids.empty() ? "-" : Join(s.build_ids)) << "\n\n";
  md << "## Failover time per fault class\n\n";
  if (s.classes.empty()) {
    md << "No failovers in these runs.\n\n";
  } else {
    md << "Failover time runs from the fault to the new leader serving (true time). Percentiles are nearest-rank.\n\n";
    md << "| fault class | failovers | p50 ms | p90 ms | p99 ms | max ms | bound ms | p99 within bound | over bound | "
          "unnecessary |\n";
    md << "|---|---:|---:|---:|---:|---:|---:|:---:|---:|---:|\n";
    for (const ClassStats& c : s.classes) {
      md << "| " << Cell(c.fault_class) << " | " << c.failover_ms.size() << " | " << Ms(c.p50) << " | " << Ms(c.p90)
         << " | " << Ms(c.p99) << " | " << Ms(c.max) << " | " << Bound(c) << " | " << WithinBound(c) << " | "
         << c.over_bound << " | " << c.unnecessary << " |\n";
    }
    md << "\n";
  }
  md << "## Safety\n\n| measure | value |\n|---|---:|\n";
  md << "| dual-acting windows | " << s.dual_acting_windows << " (" << Ms(s.dual_acting_ms) << " ms in total) |\n";
  md << "| stale writes accepted | " << s.stale_writes_accepted << " |\n";
  md << "| stale writes rejected | " << s.stale_writes_rejected << " |\n";
  md << "| unnecessary failovers | " << s.unnecessary_failovers << " |\n\n";
  md << "## Scenarios\n\n| scenario | hash | runs | failed | seeds |\n|---|---|---:|---:|---|\n";
  for (const ScenarioRuns& sc : s.scenarios) {
    md << "| " << Cell(sc.name) << " | `" << sc.hash << "` | " << sc.runs << " | " << sc.failed << " | "
       << SeedRanges(sc.seeds) << " |\n";
  }
  md << "\n";
  if (!s.failed.empty()) {
    md << "## Failed runs\n\nReproduce each with the command shown.\n\n";
    for (const RunResult* r : s.failed) {
      md << "- `" << r->ReproCommand() << "` — " << Cell(FailedChecks(*r)) << "\n";
    }
    md << "\n";
  }
  md << "Charts (CDF and histogram per fault class, leadership timeline";
  if (timeline != nullptr) md << " of " << timeline->scenario_name << " seed " << timeline->seed;
  md << ") are in `report.html`.\n";
  return md.str();
}

std::string RenderHtml(const FailoverSummary& s, const RunResult* timeline) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>kvchaos failover report</title>\n"
    << "<style>\n"
       "body{font-family:sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 16px}\n"
       "h1{font-size:24px}h2{font-size:19px;margin-top:32px;border-bottom:1px solid #ccc;padding-bottom:4px}\n"
       "h3{font-size:16px}\n"
       "table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #bbb;padding:4px 10px;"
       "font-size:14px}\n"
       "th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
       ".bad{color:#b00020;font-weight:bold}.ok{color:#006d3c}\n"
       ".charts{display:flex;flex-wrap:wrap;gap:12px}.charts svg{border:1px solid #ddd;background:#fff}\n"
       "code{background:#f4f4f4;padding:1px 4px}\n"
       "</style>\n</head>\n<body>\n";
  h << "<h1>kvchaos failover report</h1>\n";
  h << "<p>Runs: <b>" << s.runs << "</b> (" << (s.failed_runs ? "<span class=\"bad\">" : "<span class=\"ok\">")
    << s.failed_runs << " failed</span>) &middot; failovers: <b>" << s.failovers << "</b> &middot; seeds: "
    << XmlEscape(SeedRanges(s.seeds)) << " &middot; builds: " << XmlEscape(Join(s.build_ids)) << "</p>\n";

  h << "<h2>Failover time per fault class</h2>\n";
  if (s.classes.empty()) {
    h << "<p>No failovers in these runs.</p>\n";
  } else {
    h << "<p>From the fault to the new leader serving, in true time; nearest-rank percentiles. The bound is the "
         "scenario's <code>expect.failover_p99_ms</code>.</p>\n";
    h << "<table>\n<tr><th>fault class</th><th>failovers</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>"
         "<th>max ms</th><th>bound ms</th><th>p99 within bound</th><th>over bound</th><th>unnecessary</th></tr>\n";
    for (const ClassStats& c : s.classes) {
      const std::string within = WithinBound(c);
      h << "<tr><td>" << XmlEscape(c.fault_class) << "</td><td class=\"n\">" << c.failover_ms.size()
        << "</td><td class=\"n\">" << Ms(c.p50) << "</td><td class=\"n\">" << Ms(c.p90) << "</td><td class=\"n\">"
        << Ms(c.p99) << "</td><td class=\"n\">" << Ms(c.max) << "</td><td class=\"n\">" << Bound(c) << "</td><td"
        << (within == "NO" ? " class=\"bad\"" : "") << ">" << within << "</td><td class=\"n\">" << c.over_bound
        << "</td><td class=\"n\">" << c.unnecessary << "</td></tr>\n";
    }
    h << "</table>\n";
    for (const ClassStats& c : s.classes) {
      h << "<h3>" << XmlEscape(c.fault_class) << "</h3>\n<div class=\"charts\">\n"
        << FailoverCdfSvg(c) << FailoverHistogramSvg(c) << "</div>\n";
    }
  }

  h << "<h2>Safety</h2>\n<table>\n<tr><th>measure</th><th>value</th></tr>\n";
  auto row = [&h](const std::string& name, const std::string& value, bool bad) {
    h << "<tr><td>" << name << "</td><td class=\"n" << (bad ? " bad" : "") << "\">" << value << "</td></tr>\n";
  };
  row("dual-acting windows", std::to_string(s.dual_acting_windows) + " (" + Ms(s.dual_acting_ms) + " ms in total)",
      s.dual_acting_windows > 0);
  row("stale writes accepted", std::to_string(s.stale_writes_accepted), s.stale_writes_accepted > 0);
  row("stale writes rejected", std::to_string(s.stale_writes_rejected), false);
  row("unnecessary failovers", std::to_string(s.unnecessary_failovers), s.unnecessary_failovers > 0);
  h << "</table>\n";

  h << "<h2>Leadership timeline</h2>\n";
  if (timeline == nullptr || timeline->leadership.empty()) {
    h << "<p>No leadership data in the chosen run.</p>\n";
  } else {
    h << "<p>Run <code>" << XmlEscape(timeline->ReproCommand()) << "</code>"
      << (timeline->passed() ? "" : " <span class=\"bad\">failed</span>") << ".</p>\n<div class=\"charts\">\n"
      << LeadershipTimelineSvg(*timeline) << "</div>\n";
  }

  h << "<h2>Scenarios</h2>\n<table>\n<tr><th>scenario</th><th>hash</th><th>runs</th><th>failed</th><th>seeds</th></tr>\n";
  for (const ScenarioRuns& sc : s.scenarios) {
    h << "<tr><td>" << XmlEscape(sc.name) << "</td><td><code>" << XmlEscape(sc.hash) << "</code></td><td class=\"n\">"
      << sc.runs << "</td><td class=\"n" << (sc.failed ? " bad" : "") << "\">" << sc.failed << "</td><td>"
      << XmlEscape(SeedRanges(sc.seeds)) << "</td></tr>\n";
  }
  h << "</table>\n";
  if (!s.failed.empty()) {
    h << "<h2>Failed runs</h2>\n<ul>\n";
    for (const RunResult* r : s.failed) {
      h << "<li><code>" << XmlEscape(r->ReproCommand()) << "</code> &mdash; " << XmlEscape(FailedChecks(*r))
        << "</li>\n";
    }
    h << "</ul>\n";
  }
  h << "</body>\n</html>\n";
  return h.str();
}

Status WriteFailoverReport(const std::vector<RunResult>& results, const ReportOptions& options) {
  if (results.empty()) return Status::InvalidArgument("report: no results to report on");
  Result<const RunResult*> timeline = ChooseTimelineRun(results, options.timeline_run);
  if (!timeline.ok()) return timeline.status();
  const FailoverSummary summary = Summarize(results);
  const std::string json = DumpJson(SummaryToJson(summary), 2) + "\n";
  const std::string md = RenderMarkdown(summary, *timeline);
  const std::string html = RenderHtml(summary, *timeline);

  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  if (ec) {
    return Status::IoError("report: cannot create output directory '" + options.out_dir + "': " + ec.message(),
                           ec.value());
  }
  const fs::path dir(options.out_dir);
  KVCHAOS_RETURN_IF_ERROR(WriteFile(dir / "summary.json", json));
  KVCHAOS_RETURN_IF_ERROR(WriteFile(dir / "summary.md", md));
  return WriteFile(dir / "report.html", html);
}

}  // namespace kvchaos::reports
