// JSON Schema validation of scenario documents and the rewriting of valijson's errors into
// `line: key: problem` messages (see scenario_schema.h).
#include "harness/scenario_schema.h"

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/common/config_reader.h"
#include "core/common/json_text.h"
#include "harness/scenario_schema_text.h"

namespace kvchaos::harness {
namespace {

using nlohmann::json;

const valijson::Schema& CompiledSchema() {
  // Built once; validation only reads it, so concurrent loads may share it.
  static const std::unique_ptr<valijson::Schema> schema = [] {
    auto compiled = std::make_unique<valijson::Schema>();
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(ScenarioSchemaJson());
    parser.populateSchema(adapter, *compiled);
    return compiled;
  }();
  return *schema;
}

// --- Finding the subschema that applies at an error's path, to say what was expected. ---

const json& Deref(const json& schema) {
  if (schema.is_object() && schema.contains("$ref")) {
    // Local references only: "#/definitions/fault", "#/definitions/expect/properties/failovers".
    const std::string ref = schema["$ref"].get<std::string>();
    if (ref.rfind("#/", 0) == 0) {
      const json::json_pointer pointer(ref.substr(1));
      if (ScenarioSchemaJson().contains(pointer)) return Deref(ScenarioSchemaJson()[pointer]);
    }
  }
  return schema;
}

bool MatchesValue(const json& subschema, const json& value) {
  if (subschema.contains("const")) return subschema["const"] == value;
  if (subschema.contains("enum")) {
    for (const json& allowed : subschema["enum"]) {
      if (allowed == value) return true;
    }
    return false;
  }
  return true;
}

// The `if` clauses of this schema are all "these properties hold these values".
bool IfMatches(const json& condition, const json* instance) {
  if (instance == nullptr || !instance->is_object()) return false;
  if (condition.contains("required")) {
    for (const json& key : condition["required"]) {
      if (!instance->contains(key.get<std::string>())) return false;
    }
  }
  if (condition.contains("properties")) {
    for (const auto& [key, sub] : condition["properties"].items()) {
      if (instance->contains(key) && !MatchesValue(sub, (*instance)[key])) return false;
    }
  }
  return true;
}

void Expand(const json& schema, const json* instance, std::vector<const json*>* out) {
  const json& s = Deref(schema);
  out->push_back(&s);
  if (!s.is_object() || !s.contains("allOf")) return;
  for (const json& branch : s["allOf"]) {
    if (branch.contains("if") && branch.contains("then")) {
      if (IfMatches(branch["if"], instance)) Expand(branch["then"], instance, out);
    } else {
      Expand(branch, instance, out);
    }
  }
}

struct Located {
  KeyPath path;
  const json* instance = nullptr;     // the value at path (nullptr when absent)
  std::vector<const json*> schemas;   // subschemas that apply there
};

// Follows valijson's context ("<root>", "[faults]", "[0]", "[node]") through instance and schema.
Located Locate(const std::vector<std::string>& context, const json& root) {
  Located at;
  at.instance = &root;
  Expand(ScenarioSchemaJson(), at.instance, &at.schemas);
  for (const std::string& token : context) {
    if (token == "<root>" || token.size() < 2 || token.front() != '[') continue;
    const std::string name = token.substr(1, token.size() - 2);
    std::vector<const json*> next_schemas;
    const json* next = nullptr;
    if (at.instance != nullptr && at.instance->is_array()) {
      const size_t index = std::stoul(name);
      if (index < at.instance->size()) next = &(*at.instance)[index];
      at.path = at.path.Index(index);
      for (const json* s : at.schemas) {
        if (s->is_object() && s->contains("items")) Expand((*s)["items"], next, &next_schemas);
      }
    } else {
      if (at.instance != nullptr && at.instance->is_object() && at.instance->contains(name)) {
        next = &(*at.instance)[name];
      }
      at.path = at.path.Key(name);
      for (const json* s : at.schemas) {
        if (!s->is_object()) continue;
        if (s->contains("properties") && (*s)["properties"].contains(name)) {
          Expand((*s)["properties"][name], next, &next_schemas);
        } else if (s->contains("additionalProperties") && (*s)["additionalProperties"].is_object()) {
          Expand((*s)["additionalProperties"], next, &next_schemas);  // a mapping keyed by names
        }
      }
    }
    at.instance = next;
    at.schemas = std::move(next_schemas);
  }
  return at;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string EnumText(const json& values) {
  std::vector<std::string> names;
  for (const json& v : values) names.push_back(v.is_string() ? v.get<std::string>() : DumpJson(v));
  return "one of " + Join(names);
}

// What the schema wants at this place, in words.
std::string Expected(const std::vector<const json*>& schemas) {
  for (const json* s : schemas) {
    if (s->is_object() && s->contains("description")) return (*s)["description"].get<std::string>();
  }
  for (const json* s : schemas) {
    if (s->is_object() && s->contains("enum")) return EnumText((*s)["enum"]);
  }
  for (const json* s : schemas) {
    if (s->is_object() && s->contains("type")) {
      const json& type = (*s)["type"];
      return type.is_string() ? "a " + type.get<std::string>() : "a value of type " + DumpJson(type);
    }
  }
  return "a different value";
}

std::string Describe(const json* value) {
  if (value == nullptr) return "nothing";
  switch (value->type()) {
    case json::value_t::null: return "no value";
    case json::value_t::boolean: return std::string("boolean ") + (value->get<bool>() ? "true" : "false");
    case json::value_t::string: return "string " + value->dump();
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer " + value->dump();
    case json::value_t::number_float: return "number " + value->dump();
    case json::value_t::array: return "a list";
    case json::value_t::object: return "a mapping";
    default: return value->dump();
  }
}

std::string ValueText(const json* value) {
  if (value == nullptr) return "(none)";
  if (value->is_string()) return value->dump();
  return value->dump();
}

std::string RangeText(const std::vector<const json*>& schemas) {
  for (const json* s : schemas) {
    if (!s->is_object()) continue;
    const bool has_min = s->contains("minimum");
    const bool has_max = s->contains("maximum");
    if (has_min && has_max) return "must be between " + DumpJson((*s)["minimum"]) + " and " + DumpJson((*s)["maximum"]);
    if (has_min) return "must be at least " + DumpJson((*s)["minimum"]);
    if (has_max) return "must be at most " + DumpJson((*s)["maximum"]);
  }
  return "expected " + Expected(schemas);
}

std::vector<std::string> AllowedKeys(const std::vector<const json*>& schemas) {
  std::set<std::string> keys;
  for (const json* s : schemas) {
    if (s->is_object() && s->contains("properties")) {
      for (const auto& [key, sub] : (*s)["properties"].items()) keys.insert(key);
    }
  }
  return {keys.begin(), keys.end()};
}

// "; did you mean 'lease_ms'?" when one candidate is close to `given` (a typo, not a new word).
std::string Suggestion(const std::string& given, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, given.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(given, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

bool StartsWith(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

// Text between the last pair of single quotes: the property name in valijson's messages.
std::string QuotedName(const std::string& text) {
  const size_t end = text.rfind('\'');
  if (end == std::string::npos || end == 0) return {};
  const size_t begin = text.rfind('\'', end - 1);
  if (begin == std::string::npos) return {};
  return text.substr(begin + 1, end - begin - 1);
}

bool IsUnder(const std::string& path, const std::string& prefix) {
  return path == prefix || StartsWith(path, prefix + ".") || StartsWith(path, prefix + "[");
}

}  // namespace

const json& ScenarioSchemaJson() {
  static const json schema = json::parse(kScenarioSchemaJson);
  return schema;
}

bool ValidateAgainstSchema(const YamlJson& doc, SourceProblems* problems) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(doc.value);
  if (validator.validate(CompiledSchema(), target, &results)) return true;

  struct Raw {
    Located at;
    std::string description;
  };
  std::vector<Raw> errors;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    errors.push_back({Locate(error.context, doc.value), error.description});
  }

  // A failed oneOf (a node reference, say) explains itself; its branches' errors are noise.
  std::vector<std::string> one_of_paths;
  for (const Raw& e : errors) {
    if (StartsWith(e.description, "Failed to validate against any child schemas allowed by oneOf")) {
      one_of_paths.push_back(e.at.path.ToString());
    }
  }

  size_t reported = 0;
  for (const Raw& e : errors) {
    const std::string path = e.at.path.ToString();
    const std::string& d = e.description;
    if (StartsWith(d, "Failed to validate against any child schemas allowed by oneOf")) {
      problems->Add(doc.ValueLine(path), path,
                    "invalid value " + ValueText(e.at.instance) + ": expected " + Expected(e.at.schemas));
      ++reported;
      continue;
    }
    bool covered = false;
    for (const std::string& p : one_of_paths) covered = covered || IsUnder(path, p);
    if (covered) continue;
    if (StartsWith(d, "Failed to validate against") || StartsWith(d, "Failed to validate item")) continue;

    if (StartsWith(d, "Object contains a property that could not be validated")) {
      const std::string name = QuotedName(d);
      const std::string key = e.at.path.Key(name).ToString();
      const std::vector<std::string> allowed = AllowedKeys(e.at.schemas);
      problems->Add(doc.KeyLine(key), key,
                    "unknown key (allowed here: " + Join(allowed) + ")" + Suggestion(name, allowed));
    } else if (StartsWith(d, "Missing required property")) {
      const std::string key = e.at.path.Key(QuotedName(d)).ToString();
      problems->Add(doc.ValueLine(path), key, "missing (required)");
    } else if (StartsWith(d, "Value type not permitted")) {
      problems->Add(doc.ValueLine(path), path,
                    "expected " + Expected(e.at.schemas) + ", got " + Describe(e.at.instance));
    } else if (StartsWith(d, "Failed to match against any enum values")) {
      std::string wanted = "expected " + Expected(e.at.schemas);
      for (const json* s : e.at.schemas) {
        if (!s->is_object() || !s->contains("enum")) continue;
        wanted = "expected " + EnumText((*s)["enum"]);
        std::vector<std::string> names;
        for (const json& v : (*s)["enum"]) {
          if (v.is_string()) names.push_back(v.get<std::string>());
        }
        if (e.at.instance != nullptr && e.at.instance->is_string()) {
          wanted += Suggestion(e.at.instance->get<std::string>(), names);
        }
      }
      problems->Add(doc.ValueLine(path), path, "invalid value " + ValueText(e.at.instance) + ": " + wanted);
    } else if (StartsWith(d, "Failed to match regex") || StartsWith(d, "Failed to match expected value set by 'const'")) {
      problems->Add(doc.ValueLine(path), path,
                    "invalid value " + ValueText(e.at.instance) + ": expected " + Expected(e.at.schemas));
    } else if (StartsWith(d, "Expected number")) {
      problems->Add(doc.ValueLine(path), path,
                    "value " + ValueText(e.at.instance) + " is out of range: " + RangeText(e.at.schemas));
    } else {
      problems->Add(doc.ValueLine(path), path, d + " (expected " + Expected(e.at.schemas) + ")");
    }
    ++reported;
  }
  if (reported == 0) problems->Add(1, "", "does not match the scenario schema");
  return false;
}

}  // namespace kvchaos::harness
