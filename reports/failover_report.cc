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

namespace {

// One table of the report as both renderers draw it: columns with what each means (the legend
// under the table), rows of cells.
struct Column {
  std::string header;
  std::string meaning;
  bool numeric = true;
};
struct CellValue {
  std::string text;
  bool bad = false;  // highlighted: a value that breaks an expectation
};
struct TableSpec {
  std::vector<Column> columns;
  std::vector<std::vector<CellValue>> rows;
};

CellValue Count(int64_t n, bool bad_if_positive = false) { return {std::to_string(n), bad_if_positive && n > 0}; }

TableSpec ClassTable(const FailoverSummary& s) {
  TableSpec t;
  t.columns = {{"fault class", "the scenario fault that hit the old leader (crash, leader-pause, partition, ...)", false},
               {"failovers", "leadership changes that fault caused, over all runs"},
               {"p50 ms", "median failover time: from the fault to the new leader serving, in true time"},
               {"p90 ms", "90th percentile of failover time (nearest rank: a measured failover)"},
               {"p99 ms", "99th percentile of failover time (nearest rank)"},
               {"max ms", "the slowest failover"},
               {"unavailable p99 ms", "99th percentile of the data plane's gap: the old leader's last accepted write to the new leader's first"},
               {"unavailable max ms", "the longest such gap"},
               {"bound ms", std::string("the strictest failover_p99_ms bounding this fault class (expect.classes.<class>, else "
                                        "the scenario's expect) among the scenarios with this fault; ") +
                                kNotApplicable + " when none sets one"},
               {"p99 within bound", std::string("p99 ms <= bound ms; ") + kNotApplicable + " without a bound", false},
               {"over bound", std::string("failovers longer than their own run's bound; ") + kNotApplicable +
                                  " without a bound"},
               {"unnecessary", "failovers the run's checker flagged unnecessary (the old leader was healthy)"},
               {"re-elections", "failovers in which the node that lost leadership took it back (no handover)"}};
  for (const ClassStats& c : s.classes) {
    const bool bounded = c.bound_ms.has_value();
    const bool within = bounded && c.p99 <= static_cast<double>(*c.bound_ms);
    t.rows.push_back({{c.fault_class},
                      Count(static_cast<int64_t>(c.failover_ms.size())),
                      {Ms(c.p50)},
                      {Ms(c.p90)},
                      {Ms(c.p99)},
                      {Ms(c.max)},
                      {Ms(c.unavailable_p99)},
                      {Ms(c.unavailable_max)},
                      {bounded ? Ms(static_cast<double>(*c.bound_ms)) : kNotApplicable},
                      {bounded ? (within ? "yes" : "NO") : kNotApplicable, bounded && !within},
                      bounded ? Count(static_cast<int64_t>(c.over_bound), true) : CellValue{kNotApplicable},
                      Count(static_cast<int64_t>(c.unnecessary), true),
                      Count(static_cast<int64_t>(c.reelections))});
  }
  return t;
}

TableSpec CoordinationTable(const FailoverSummary& s) {
  TableSpec t;
  t.columns = {{"coordination", "what the nodes elected a leader through (sim-redis: the simulator's model of Redis)", false},
               {"mode", "sim or real", false},
               {"runs", "runs against this coordination in this mode"},
               {"failovers", "leadership changes, every fault class together"},
               {"p50 ms", "median failover time"},
               {"p99 ms", "99th percentile of failover time (nearest rank)"},
               {"max ms", "the slowest failover"},
               {"unavailable p99 ms", "99th percentile of the data plane's gap per failover"},
               {"dual-acting windows", "times two nodes accepted data-plane writes as leader at once"},
               {"dual-acting ms", "their total length"},
               {"stale writes accepted", "writes under an older term the meta index took (must be 0)"},
               {"token regressions", "fencing tokens handed out again or lower (a Redis failover that lost the "
                                     "newest writes)"},
               {"duplicate lock holders", std::string("grants of the lock while another holder's lease still ran (a "
                                                      "promoted replica without the lock); measured in sim only, ") +
                                              kNotApplicable + " in real"},
               {"unnecessary", "failovers while the old leader was healthy"}};
  for (const CoordinationStats& k : s.coordination) {
    const bool timed = !k.failover_ms.empty();
    t.rows.push_back({{k.coordination},
                      {k.mode},
                      Count(static_cast<int64_t>(k.runs)),
                      Count(static_cast<int64_t>(k.failover_ms.size())),
                      {timed ? Ms(k.p50) : kNotApplicable},
                      {timed ? Ms(k.p99) : kNotApplicable},
                      {timed ? Ms(k.max) : kNotApplicable},
                      {timed ? Ms(k.unavailable_p99) : kNotApplicable},
                      Count(k.dual_acting_windows),
                      {Ms(k.dual_acting_ms)},
                      Count(k.stale_writes_accepted, true),
                      Count(k.token_regressions),
                      k.mode == "sim" ? Count(k.duplicate_lock_holders) : CellValue{kNotApplicable},
                      Count(k.unnecessary, true)});
  }
  return t;
}

TableSpec SafetyTable(const FailoverSummary& s) {
  TableSpec t;
  t.columns = {{"measure", "", false}, {"value", ""}};
  t.rows = {{{"dual-acting windows"},
             {std::to_string(s.dual_acting_windows) + " (" + Ms(s.dual_acting_ms) + " ms in total)",
              s.dual_acting_windows > 0}},
            {{"stale writes accepted"}, Count(s.stale_writes_accepted, true)},
            {{"stale writes rejected"}, Count(s.stale_writes_rejected)},
            {{"unnecessary failovers"}, Count(s.unnecessary_failovers, true)}};
  return t;
}

// The rows of the safety table say what they count (they are its legend).
const std::vector<std::pair<std::string, std::string>> kSafetyMeanings = {
    {"dual-acting windows", "times two nodes accepted data-plane writes as leader at once (must be 0)"},
    {"stale writes accepted", "writes with an older leader's fencing token the meta index took (must be 0)"},
    {"stale writes rejected", "such writes the fence refused (the defence at work)"},
    {"unnecessary failovers", "failovers while the old leader was healthy"}};

std::string ErrorsByCode(const std::map<std::string, int64_t>& errors) {
  std::string out;
  for (const auto& [code, count] : errors) out += (out.empty() ? "" : ", ") + code + " " + std::to_string(count);
  return out.empty() ? "0" : out;
}

// "3 of 5": the runs of a scenario that measured what a table shows.
std::string RunsOf(const ScenarioRuns& sc, size_t measured) {
  return std::to_string(measured) + " of " + std::to_string(sc.runs);
}

// A scenario none of whose runs measured what the table shows gets a row of "–", never of 0s that
// would read as measurements; true when it got one.
bool AddUnmeasuredRow(TableSpec& t, const ScenarioRuns& sc, size_t measured) {
  if (measured != 0) return false;
  std::vector<CellValue> row{{sc.name}, {sc.modes}, {RunsOf(sc, measured)}};
  row.resize(t.columns.size(), CellValue{kNotApplicable});
  t.rows.push_back(std::move(row));
  return true;
}

TableSpec DataPlaneTable(const FailoverSummary& s) {
  TableSpec t;
  t.columns = {{"scenario", "", false},
               {"mode", "sim or real", false},
               {"runs", std::string("runs that measured the data plane, of all runs; the other cells are ") +
                            kNotApplicable + " when none did (a run without a workload measures none)", false},
               {"saves", "Save calls acknowledged"},
               {"loads", "Load calls that returned the right bytes"},
               {"errors by code", "failed saves, loads and readbacks by status code", false},
               {"corrupt detected", "checksum mismatches caught and reported as errors"},
               {"corrupt returned as good", "corrupt data a Load returned as good (must be 0)"},
               {"acked blocks", "blocks acknowledged, read back at the end of the run"},
               {"acked unreadable", "acknowledged blocks the final readback could not read (0 unless the scenario "
                                    "allows losses: a power loss without durable commits)"},
               {"health transitions", "availability changes of the clients' store backends"}};
  for (const ScenarioRuns& sc : s.scenarios) {
    const DataPlaneTotals& d = sc.data_plane;
    if (AddUnmeasuredRow(t, sc, d.runs)) continue;
    t.rows.push_back({{sc.name},
                      {sc.modes},
                      {RunsOf(sc, d.runs)},
                      Count(d.saves),
                      Count(d.loads),
                      {ErrorsByCode(d.errors_by_code)},
                      Count(d.corrupt_detected),
                      Count(d.corrupt_returned, true),
                      Count(d.acked_blocks),
                      Count(d.acked_unreadable),
                      Count(d.health_transitions)});
  }
  return t;
}

TableSpec HistoryTable(const FailoverSummary& s) {
  TableSpec t;
  t.columns = {{"scenario", "", false},
               {"mode", "sim or real", false},
               {"runs", std::string("runs that checked a history of their meta calls, of all runs; the other cells are ") +
                            kNotApplicable + " when none did", false},
               {"operations", "meta calls recorded (one per key of a batch call)"},
               {"keys", "keys checked, each as its own register"},
               {"not linearizable", "keys whose calls no order explains (must be 0)"},
               {"unknown (budget)", "keys the search gave up on within its budget (must be 0)"},
               {"lost writes", "acknowledged commits a later read did not find, with nothing to explain it"},
               {"non-monotonic reads", "a client read an older location of a key after a newer one"},
               {"read-your-writes misses", "a client did not see its own acknowledged commit"}};
  for (const ScenarioRuns& sc : s.scenarios) {
    const HistoryTotals& h = sc.history;
    if (AddUnmeasuredRow(t, sc, h.runs)) continue;
    t.rows.push_back({{sc.name},
                      {sc.modes},
                      {RunsOf(sc, h.runs)},
                      Count(h.operations),
                      Count(h.keys),
                      Count(h.keys_not_linearizable, true),
                      Count(h.keys_unknown_budget, true),
                      Count(h.lost_writes, true),
                      Count(h.non_monotonic_reads, true),
                      Count(h.read_your_writes, true)});
  }
  return t;
}

// The first anomaly of each scenario that has one: what was found, the smallest failing ops, and
// the command that replays the run.
struct AnomalyListing {
  std::string scenario, finding, repro;
  std::vector<std::string> ops;
  std::string key;
  std::vector<harness::AnomalyOp> timeline;  // the same ops, drawn (empty in older results)
};
std::vector<AnomalyListing> Anomalies(const FailoverSummary& s) {
  std::vector<AnomalyListing> out;
  for (const ScenarioRuns& sc : s.scenarios) {
    if (!sc.history.first_anomaly.empty()) {
      out.push_back({sc.name, sc.history.first_anomaly, sc.history.anomaly_repro, sc.history.anomaly,
                     sc.history.anomaly_key, sc.history.anomaly_ops});
    }
  }
  return out;
}

TableSpec ScenarioTable(const FailoverSummary& s) {
  TableSpec t;
  t.columns = {{"scenario", "", false},
               {"hash", "of the scenario's canonical form (seed, name and description excluded)", false},
               {"runs", "runs of it in these results"},
               {"failed", "runs that missed an expectation or could not complete"},
               {"seeds", "the seeds they ran with", false}};
  for (const ScenarioRuns& sc : s.scenarios) {
    t.rows.push_back({{sc.name}, {"`" + sc.hash + "`"}, Count(static_cast<int64_t>(sc.runs)),
                      Count(static_cast<int64_t>(sc.failed), true), {SeedRanges(sc.seeds)}});
  }
  return t;
}

void MarkdownTable(std::ostringstream& md, const TableSpec& t) {
  md << "|";
  for (const Column& c : t.columns) md << " " << Cell(c.header) << " |";
  md << "\n|";
  for (const Column& c : t.columns) md << (c.numeric ? "---:|" : "---|");
  md << "\n";
  for (const auto& row : t.rows) {
    md << "|";
    for (const CellValue& v : row) md << " " << Cell(v.text) << " |";
    md << "\n";
  }
  md << "\n";
  bool any = false;
  for (const Column& c : t.columns) {
    if (c.meaning.empty()) continue;
    md << "- *" << Cell(c.header) << "*: " << c.meaning << "\n";
    any = true;
  }
  if (any) md << "\n";
}

void HtmlTable(std::ostringstream& h, const TableSpec& t) {
  h << "<table>\n<tr>";
  for (const Column& c : t.columns) h << "<th>" << XmlEscape(c.header) << "</th>";
  h << "</tr>\n";
  for (const auto& row : t.rows) {
    h << "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      std::string cls = t.columns[i].numeric ? "n" : "";
      if (row[i].bad) cls += cls.empty() ? "bad" : " bad";
      std::string text = row[i].text;
      const bool code = text.size() > 2 && text.front() == '`' && text.back() == '`';
      if (code) text = text.substr(1, text.size() - 2);
      h << "<td" << (cls.empty() ? "" : " class=\"" + cls + "\"") << ">" << (code ? "<code>" : "") << XmlEscape(text)
        << (code ? "</code>" : "") << "</td>";
    }
    h << "</tr>\n";
  }
  h << "</table>\n";
  bool any = false;
  for (const Column& c : t.columns) any = any || !c.meaning.empty();
  if (!any) return;
  h << "<dl class=\"legend\">\n";
  for (const Column& c : t.columns) {
    if (!c.meaning.empty()) h << "<dt>" << XmlEscape(c.header) << "</dt><dd>" << XmlEscape(c.meaning) << "</dd>\n";
  }
  h << "</dl>\n";
}

void SafetyLegendMarkdown(std::ostringstream& md) {
  for (const auto& [name, meaning] : kSafetyMeanings) md << "- *" << name << "*: " << meaning << "\n";
  md << "\n";
}

void SafetyLegendHtml(std::ostringstream& h) {
  h << "<dl class=\"legend\">\n";
  for (const auto& [name, meaning] : kSafetyMeanings) {
    h << "<dt>" << XmlEscape(name) << "</dt><dd>" << XmlEscape(meaning) << "</dd>\n";
  }
  h << "</dl>\n";
}

}  // namespace

std::string RenderMarkdown(const FailoverSummary& s, const RunResult* timeline) {
  std::ostringstream md;
  md << "# Failover report\n\n";
  md << "- Runs: " << s.runs << " (" << s.failed_runs << " failed), failovers: " << s.failovers << "\n";
  md << "- Seeds: " << SeedRanges(s.seeds) << "\n";
  md << "- Builds: " << (s.build_ids.empty() ? "-" : Join(s.build_ids)) << "\n";
  md << "- Times are milliseconds of true time, to 0.1 ms; " << kNotApplicable << " marks a cell where nothing applies.\n\n";
  md << "## Failover time per fault class\n\n";
  if (s.classes.empty()) {
    md << "No failovers in these runs.\n\n";
  } else {
    MarkdownTable(md, ClassTable(s));
  }
  md << "## Failover per coordination\n\n";
  MarkdownTable(md, CoordinationTable(s));
  md << "## Safety\n\n";
  MarkdownTable(md, SafetyTable(s));
  SafetyLegendMarkdown(md);
  md << "## Data plane per scenario\n\n";
  MarkdownTable(md, DataPlaneTable(s));
  md << "## Histories per scenario\n\n";
  MarkdownTable(md, HistoryTable(s));
  for (const AnomalyListing& a : Anomalies(s)) {
    md << "### " << a.scenario << ": " << a.finding << "\n\nReplay: `" << a.repro << "`\n\n```\n";
    for (const std::string& op : a.ops) md << op << "\n";
    md << "```\n\n";
  }
  md << "## Scenarios\n\n";
  MarkdownTable(md, ScenarioTable(s));
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
       "table{border-collapse:collapse;margin:8px 0 8px}th,td{border:1px solid #bbb;padding:4px 10px;"
       "font-size:14px}\n"
       "th{background:#f0f0f0}td{white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
       ".bad{color:#b00020;font-weight:bold}.ok{color:#006d3c}\n"
       "dl.legend{display:grid;grid-template-columns:max-content auto;gap:2px 12px;font-size:13px;color:#444;"
       "margin:4px 0 16px}dl.legend dt{font-style:italic}dl.legend dd{margin:0}\n"
       ".charts{display:flex;flex-wrap:wrap;gap:12px}.charts svg{border:1px solid #ddd;background:#fff}\n"
       "code{background:#f4f4f4;padding:1px 4px}\n"
       "</style>\n</head>\n<body>\n";
  h << "<h1>kvchaos failover report</h1>\n";
  h << "<p>Runs: <b>" << s.runs << "</b> (" << (s.failed_runs ? "<span class=\"bad\">" : "<span class=\"ok\">")
    << s.failed_runs << " failed</span>) &middot; failovers: <b>" << s.failovers << "</b> &middot; seeds: "
    << XmlEscape(SeedRanges(s.seeds)) << " &middot; builds: " << XmlEscape(Join(s.build_ids)) << "</p>\n";
  h << "<p>Times are milliseconds of true time, to 0.1 ms; " << kNotApplicable
    << " marks a cell where nothing applies (no bound set, no data plane measured).</p>\n";

  h << "<h2>Failover time per fault class</h2>\n";
  if (s.classes.empty()) {
    h << "<p>No failovers in these runs.</p>\n";
  } else {
    HtmlTable(h, ClassTable(s));
    for (const ClassStats& c : s.classes) {
      h << "<h3>" << XmlEscape(c.fault_class) << "</h3>\n<div class=\"charts\">\n"
        << FailoverCdfSvg(c) << FailoverHistogramSvg(c) << "</div>\n";
    }
  }

  h << "<h2>Failover per coordination</h2>\n";
  HtmlTable(h, CoordinationTable(s));

  h << "<h2>Safety</h2>\n";
  HtmlTable(h, SafetyTable(s));
  SafetyLegendHtml(h);

  h << "<h2>Data plane per scenario</h2>\n";
  HtmlTable(h, DataPlaneTable(s));

  h << "<h2>Histories per scenario</h2>\n";
  HtmlTable(h, HistoryTable(s));
  for (const AnomalyListing& a : Anomalies(s)) {
    h << "<h3>" << XmlEscape(a.scenario) << ": <span class=\"bad\">" << XmlEscape(a.finding) << "</span></h3>\n"
      << "<p>Replay: <code>" << XmlEscape(a.repro) << "</code></p>\n<pre>";
    for (const std::string& op : a.ops) h << XmlEscape(op) << "\n";
    h << "</pre>\n";
    if (!a.timeline.empty()) h << "<div class=\"charts\">\n" << AnomalyTimelineSvg(a.scenario, a.key, a.timeline) << "</div>\n";
  }

  h << "<h2>Leadership timeline</h2>\n";
  if (timeline == nullptr || timeline->leadership.empty()) {
    h << "<p>No leadership data in the chosen run.</p>\n";
  } else {
    h << "<p>Run <code>" << XmlEscape(timeline->ReproCommand()) << "</code>"
      << (timeline->passed() ? "" : " <span class=\"bad\">failed</span>") << ".</p>\n<div class=\"charts\">\n"
      << LeadershipTimelineSvg(*timeline) << "</div>\n";
  }

  h << "<h2>Scenarios</h2>\n";
  HtmlTable(h, ScenarioTable(s));
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
