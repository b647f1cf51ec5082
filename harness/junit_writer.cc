// JUnit XML rendering of run results (see junit_writer.h).
#include "harness/junit_writer.h"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>

namespace kvchaos::harness {
namespace {

std::string Seconds(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", ms / 1000.0);
  return buf;
}

std::string FailureText(const RunResult& r) {
  std::string text;
  for (const InvariantVerdict& v : r.verdicts) {
    if (!v.passed) text += "FAILED " + v.name + ": " + v.detail + "\n";
  }
  if (!r.error.empty()) text += "ERROR: " + r.error + "\n";
  text += "reproduce: " + r.ReproCommand() + "\n";
  return text;
}

std::string FailureSummary(const RunResult& r) {
  std::string names;
  for (const InvariantVerdict& v : r.verdicts) {
    if (!v.passed) names += (names.empty() ? "" : ", ") + v.name;
  }
  return "violated: " + names;
}

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters other than tab/newline/CR are not allowed in XML 1.0 at all.
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') break;
        out += static_cast<char>(c);
    }
  }
  return out;
}

std::string JUnitXml(const std::vector<RunResult>& results) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RunResult*>> suites;
  for (const RunResult& r : results) {
    auto [it, inserted] = suites.try_emplace(r.scenario_name);
    if (inserted) order.push_back(r.scenario_name);
    it->second.push_back(&r);
  }
  size_t failures = 0;
  size_t errors = 0;
  double total_ms = 0;
  for (const RunResult& r : results) {
    if (!r.error.empty()) {
      ++errors;
    } else if (!r.passed()) {
      ++failures;
    }
    total_ms += r.wall_ms;
  }
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += "<testsuites name=\"kvchaos\" tests=\"" + std::to_string(results.size()) + "\" failures=\"" +
         std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\" time=\"" + Seconds(total_ms) +
         "\">\n";
  for (const std::string& name : order) {
    const std::vector<const RunResult*>& runs = suites[name];
    size_t suite_failures = 0;
    size_t suite_errors = 0;
    double suite_ms = 0;
    for (const RunResult* r : runs) {
      suite_errors += r->error.empty() ? 0 : 1;
      suite_failures += (r->error.empty() && !r->passed()) ? 1 : 0;
      suite_ms += r->wall_ms;
    }
    xml += "  <testsuite name=\"" + XmlEscape(name) + "\" tests=\"" + std::to_string(runs.size()) +
           "\" failures=\"" + std::to_string(suite_failures) + "\" errors=\"" + std::to_string(suite_errors) +
           "\" time=\"" + Seconds(suite_ms) + "\">\n";
    for (const RunResult* r : runs) {
      xml += "    <testcase classname=\"" + XmlEscape(name) + "\" name=\"" +
             XmlEscape(r->mode + " seed=" + std::to_string(r->seed)) + "\" file=\"" + XmlEscape(r->scenario_file) +
             "\" time=\"" + Seconds(r->wall_ms) + "\"";
      if (r->passed()) {
        xml += "/>\n";
        continue;
      }
      xml += ">\n";
      const char* tag = r->error.empty() ? "failure" : "error";
      const std::string message = r->error.empty() ? FailureSummary(*r) : r->error;
      xml += std::string("      <") + tag + " message=\"" + XmlEscape(message) + "\">" + XmlEscape(FailureText(*r)) +
             "</" + tag + ">\n";
      xml += "    </testcase>\n";
    }
    xml += "  </testsuite>\n";
  }
  xml += "</testsuites>\n";
  return xml;
}

Status WriteJUnit(const std::vector<RunResult>& results, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IoError("junit '" + path + "': cannot create", errno);
  out << JUnitXml(results);
  out.flush();
  if (!out) return Status::IoError("junit '" + path + "': write failed", errno);
  return Status::Ok();
}

}  // namespace kvchaos::harness
