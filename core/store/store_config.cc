// Reading and validating PosixStoreConfig (rules in store_config.h).
#include "core/store/store_config.h"

#include <filesystem>
#include <set>
#include <sstream>

#include "core/common/thread_util.h"
#include "core/store/health_window.h"

namespace kvchaos::store {
namespace {

std::vector<std::string> SplitBackends(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ':')) out.push_back(item);
  if (!text.empty() && text.back() == ':') out.push_back("");
  return out;
}

Status JoinProblems(const std::vector<std::string>& problems) {
  if (problems.empty()) return Status::Ok();
  std::string msg;
  for (const std::string& p : problems) msg += (msg.empty() ? "" : "\n") + p;
  return Status::InvalidConfig(msg);
}

}  // namespace

std::string NormalizeBackendPath(const std::string& path) {
  if (path.size() > 1 && path.back() == '/') return path.substr(0, path.size() - 1);
  return path;
}

std::vector<std::string> SameDirectoryWarnings(const std::vector<std::string>& backends) {
  std::vector<std::string> warnings;
  const auto lexical = [](const std::string& p) {
    std::string normal = std::filesystem::path(p).lexically_normal().string();
    while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
    return normal;
  };
  for (size_t i = 0; i < backends.size(); ++i) {
    for (size_t j = i + 1; j < backends.size(); ++j) {
      if (lexical(backends[i]) != lexical(backends[j])) continue;
      warnings.push_back("storage_backends: '" + backends[i] + "' and '" + backends[j] +
                         "' are the same directory; they count as two paths (n = " + std::to_string(backends.size()) +
                         "), as upstream peers count them, so routing agrees with theirs; list it once if unintended");
    }
  }
  return warnings;
}

Status StoreHealthConfig::Validate() const {
  std::vector<std::string> problems;
  if (!(health_check_interval_s > 0)) problems.push_back("store_health.health_check_interval_s: must be > 0");
  if (!(health_check_timeout_s > 0)) problems.push_back("store_health.health_check_timeout_s: must be > 0");
  if (health_check_timeout_s > 0 && health_check_interval_s > 0 &&
      !(health_check_timeout_s < health_check_interval_s)) {
    problems.push_back("store_health.health_check_timeout_s: must be < health_check_interval_s (" +
                       std::to_string(health_check_timeout_s) + " >= " + std::to_string(health_check_interval_s) + ")");
  }
  if (health_window_size < 1 || health_window_size > HealthWindow::kMaxWindowSize) {
    problems.push_back("store_health.health_window_size: must be in 1.." +
                       std::to_string(HealthWindow::kMaxWindowSize) + ", got " + std::to_string(health_window_size));
  }
  if (failure_threshold < 1) {
    problems.push_back("store_health.failure_threshold: must be > 0, got " + std::to_string(failure_threshold));
  } else if (failure_threshold > health_window_size) {
    problems.push_back("store_health.failure_threshold: must be <= health_window_size (" +
                       std::to_string(failure_threshold) + " > " + std::to_string(health_window_size) + ")");
  }
  return JoinProblems(problems);
}

Status PosixStoreConfig::NormalizeAndValidate() {
  std::vector<std::string> problems;
  std::vector<std::string> backends;
  std::set<std::string> seen;
  if (storage_backends.empty()) problems.push_back("storage_backends: at least one path is required");
  for (const std::string& raw : storage_backends) {
    if (raw.empty()) {
      problems.push_back("storage_backends: empty path in the list");
      continue;
    }
    if (raw.front() != '/') {
      problems.push_back("storage_backends: '" + raw + "' is not an absolute path");
      continue;
    }
    // Upstream's key: the path with a '/' appended when missing; exact repeats are dropped.
    if (seen.insert(raw.back() == '/' ? raw : raw + "/").second) backends.push_back(NormalizeBackendPath(raw));
  }
  if (backends.size() > 64) problems.push_back("storage_backends: at most 64 distinct paths are supported");
  if (data_dir_shard_bytes < 0 || data_dir_shard_bytes > kMaxShardWidth) {
    problems.push_back("data_dir_shard_bytes: must be in 0.." + std::to_string(kMaxShardWidth) + ", got " +
                       std::to_string(data_dir_shard_bytes));
  }
  if (device_id < -1) problems.push_back("device_id: must be >= -1, got " + std::to_string(device_id));
  if (timeout_ms < 0) problems.push_back("timeout_ms: must be >= 0 (0 disables timeouts), got " + std::to_string(timeout_ms));
  if (concurrency < 1 || concurrency > 1024) {
    problems.push_back("concurrency: must be in 1..1024, got " + std::to_string(concurrency));
  }
  if (shard_size == 0) problems.push_back("shard_size: must be > 0");
  if (tensor_size == 0) problems.push_back("tensor_size: must be > 0");
  if (block_size == 0) problems.push_back("block_size: must be > 0");
  if (shard_size != 0 && block_size % shard_size != 0) {
    problems.push_back("block_size: must be a multiple of shard_size (" + std::to_string(block_size) + " % " +
                       std::to_string(shard_size) + " != 0)");
  }
  if (tensor_size != 0 && shard_size % tensor_size != 0) {
    problems.push_back("shard_size: must be a multiple of tensor_size (" + std::to_string(shard_size) + " % " +
                       std::to_string(tensor_size) + " != 0)");
  }
  if (io_direct && (shard_size % 4096 != 0 || tensor_size % 4096 != 0)) {
    problems.push_back("io_direct: shard_size and tensor_size must be multiples of 4096 for direct I/O");
  }
  for (int cpu : cpu_affinity) {
    if (cpu < 0) problems.push_back("cpu_affinity: negative CPU " + std::to_string(cpu));
  }
  for (const auto& [key, value] : {std::pair{"max_inflight_shards", max_inflight_shards},
                                   std::pair{"max_pending_tasks", max_pending_tasks}}) {
    if (value < 1 || value > kMaxQueueBound) {
      problems.push_back(std::string(key) + ": must be in 1.." + std::to_string(kMaxQueueBound) + ", got " +
                         std::to_string(value));
    }
  }
  Status health_status = health.Validate();
  if (!health_status.ok()) problems.push_back(health_status.message());
  if (!problems.empty()) return JoinProblems(problems);
  storage_backends = std::move(backends);
  return Status::Ok();
}

void ReadStoreConfig(ConfigSection& section, PosixStoreConfig* out, std::vector<std::string>* given_keys) {
  PosixStoreConfig cfg = *out;
  std::string backends;
  const bool listed = section.Has("storage_backends") && section.node()["storage_backends"].IsSequence();
  if (listed ? section.Required("storage_backends", &cfg.storage_backends)
             : section.Required("storage_backends", &backends)) {
    if (!listed) cfg.storage_backends = SplitBackends(backends);
    // Path problems are reported here, at the key's line; value problems below at theirs.
    for (const std::string& p : cfg.storage_backends) {
      if (p.empty()) section.Problem("storage_backends", listed ? "empty path in the list" : "empty path in '" + backends + "'");
      else if (p.front() != '/') section.Problem("storage_backends", "'" + p + "' is not an absolute path");
    }
  }
  std::string engine;
  if (section.Optional("posix_io_engine", &engine)) {
    if (engine == "aio") cfg.io_engine = IoEngineKind::kAio;
    else if (engine == "psync") cfg.io_engine = IoEngineKind::kPsync;
    else section.Problem("posix_io_engine", "must be aio or psync, got '" + engine + "'");
  }
  section.Optional("io_direct", &cfg.io_direct);
  if (section.Optional("data_dir_shard_bytes", &cfg.data_dir_shard_bytes) &&
      (cfg.data_dir_shard_bytes < 0 || cfg.data_dir_shard_bytes > kMaxShardWidth)) {
    section.Problem("data_dir_shard_bytes", "must be in 0.." + std::to_string(kMaxShardWidth) +
                                                " (hex characters of the shard directory name; 0: one data/ directory)");
  }
  if (section.Optional("device_id", &cfg.device_id) && cfg.device_id < -1) {
    section.Problem("device_id", "must be >= -1");
  }
  section.Optional("posix_gc_enable", &cfg.posix_gc_enable);
  section.Optional("shard_dirs_at_setup", &cfg.shard_dirs_at_setup);
  section.Optional("durable_commit", &cfg.durable_commit);
  if (section.OptionalMillis("timeout_ms", &cfg.timeout_ms) && cfg.timeout_ms < 0) {
    section.Problem("timeout_ms", "must be >= 0 (0 disables timeouts)");
  }
  section.OptionalByteSize("block_size", &cfg.block_size);
  section.OptionalByteSize("shard_size", &cfg.shard_size);
  section.OptionalByteSize("tensor_size", &cfg.tensor_size);
  for (const char* key : {"block_size", "shard_size", "tensor_size"}) {
    const uint64_t v = std::string_view(key) == "block_size" ? cfg.block_size
                       : std::string_view(key) == "shard_size" ? cfg.shard_size
                                                               : cfg.tensor_size;
    if (section.Has(key) && v == 0) section.Problem(key, "must be > 0");
  }
  if (section.Has("block_size") && cfg.shard_size != 0 && cfg.block_size % cfg.shard_size != 0) {
    section.Problem("block_size", "must be a multiple of shard_size");
  }
  if (section.Has("shard_size") && cfg.tensor_size != 0 && cfg.shard_size % cfg.tensor_size != 0) {
    section.Problem("shard_size", "must be a multiple of tensor_size");
  }
  if (section.Optional("concurrency", &cfg.concurrency) && (cfg.concurrency < 1 || cfg.concurrency > 1024)) {
    section.Problem("concurrency", "must be in 1..1024");
  }
  for (const auto& [key, value] : {std::pair{"max_inflight_shards", &cfg.max_inflight_shards},
                                   std::pair{"max_pending_tasks", &cfg.max_pending_tasks}}) {
    if (section.Optional(key, value) && (*value < 1 || *value > PosixStoreConfig::kMaxQueueBound)) {
      section.Problem(key, "must be in 1.." + std::to_string(PosixStoreConfig::kMaxQueueBound));
    }
  }
  std::string cpus;
  if (section.Optional("cpu_affinity", &cpus) && !cpus.empty()) {
    Result<std::vector<int>> list = ParseCpuList(cpus);
    if (list.ok()) cfg.cpu_affinity = *list;
    else section.Problem("cpu_affinity", list.status().message());
  }
  if (std::optional<ConfigSection> health = section.Section("store_health")) {
    StoreHealthConfig& h = cfg.health;
    health->Optional("enabled", &h.enabled);
    if (health->OptionalSeconds("health_check_interval_s", &h.health_check_interval_s) && !(h.health_check_interval_s > 0)) {
      health->Problem("health_check_interval_s", "must be > 0");
    }
    if (health->OptionalSeconds("health_check_timeout_s", &h.health_check_timeout_s)) {
      if (!(h.health_check_timeout_s > 0)) health->Problem("health_check_timeout_s", "must be > 0");
    }
    if (h.health_check_timeout_s > 0 && h.health_check_interval_s > 0 &&
        !(h.health_check_timeout_s < h.health_check_interval_s)) {
      health->Problem("health_check_timeout_s", "must be < health_check_interval_s");
    }
    if (health->Optional("health_window_size", &h.health_window_size) &&
        (h.health_window_size < 1 || h.health_window_size > HealthWindow::kMaxWindowSize)) {
      health->Problem("health_window_size", "must be in 1.." + std::to_string(HealthWindow::kMaxWindowSize));
    }
    if (health->Optional("failure_threshold", &h.failure_threshold)) {
      if (h.failure_threshold < 1) health->Problem("failure_threshold", "must be > 0");
      else if (h.failure_threshold > h.health_window_size) {
        health->Problem("failure_threshold", "must be <= health_window_size");
      }
    }
    health->Done();
    if (given_keys != nullptr) {
      for (const std::string& key : health->Keys()) given_keys->push_back("store_health." + key);
    }
  }
  if (given_keys != nullptr) {
    for (const std::string& key : section.Keys()) {
      if (key != "store_health") given_keys->push_back(key);
    }
  }
  *out = cfg;
}

nlohmann::json StoreConfigToJson(const PosixStoreConfig& c) {
  std::string backends;
  for (const std::string& p : c.storage_backends) backends += (backends.empty() ? "" : ":") + p;
  return nlohmann::json{{"storage_backends", backends},
                        {"posix_io_engine", c.io_engine == IoEngineKind::kAio ? "aio" : "psync"},
                        {"io_direct", c.io_direct},
                        {"timeout_ms", c.timeout_ms},
                        {"block_size", c.block_size},
                        {"shard_size", c.shard_size},
                        {"tensor_size", c.tensor_size},
                        {"concurrency", c.concurrency},
                        {"durable_commit", c.durable_commit},
                        {"cpu_affinity", c.cpu_affinity},
                        {"max_inflight_shards", c.max_inflight_shards},
                        {"max_pending_tasks", c.max_pending_tasks},
                        {"data_dir_shard_bytes", c.data_dir_shard_bytes},
                        {"device_id", c.device_id},
                        {"posix_gc_enable", c.posix_gc_enable},
                        {"shard_dirs_at_setup", c.shard_dirs_at_setup},
                        {"store_health",
                         {{"enabled", c.health.enabled},
                          {"health_check_interval_s", c.health.health_check_interval_s},
                          {"health_check_timeout_s", c.health.health_check_timeout_s},
                          {"health_window_size", c.health.health_window_size},
                          {"failure_threshold", c.health.failure_threshold}}}};
}

namespace {

Result<PosixStoreConfig> ReadFromFile(ConfigFile& file, std::vector<std::string>* given_keys) {
  ConfigSection root = file.Root();
  PosixStoreConfig cfg;
  if (root.Has("ucm_connectors")) {
    std::vector<ConfigSection> connectors = root.SectionList("ucm_connectors", true);
    bool found = false;
    for (ConfigSection& connector : connectors) {
      if (!connector.Has("ucm_connector_config")) continue;
      std::optional<ConfigSection> inner = connector.Section("ucm_connector_config", true);
      if (!inner || found) continue;
      found = true;
      ReadStoreConfig(*inner, &cfg, given_keys);
      inner->Done({"store_pipeline", "use_layerwise"});
      connector.Done({"ucm_connector_name"});
    }
    if (!found) root.Problem("ucm_connectors", "no entry has a ucm_connector_config");
    root.Done({"use_layerwise"});
  } else {
    ReadStoreConfig(root, &cfg, given_keys);
    root.Done({"store_pipeline", "use_layerwise"});
  }
  KVCHAOS_RETURN_IF_ERROR(file.Finish());
  Status s = cfg.NormalizeAndValidate();
  if (!s.ok()) return s.WithContext(file.name());
  return cfg;
}

}  // namespace

Result<PosixStoreConfig> LoadStoreConfig(const std::string& path, std::vector<std::string>* given_keys) {
  Result<ConfigFile> file = ConfigFile::Load(path);
  if (!file.ok()) return file.status();
  return ReadFromFile(*file, given_keys);
}

Result<PosixStoreConfig> ParseStoreConfig(std::string_view text, const std::string& name,
                                          std::vector<std::string>* given_keys) {
  Result<ConfigFile> file = ConfigFile::Parse(text, name);
  if (!file.ok()) return file.status();
  return ReadFromFile(*file, given_keys);
}

}  // namespace kvchaos::store
