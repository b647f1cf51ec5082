// PosixStoreConfig from YAML: upstream shape, defaults, normalisation and error messages.
#include "core/store/store_config.h"

#include <gtest/gtest.h>

namespace kvchaos::store {
namespace {

TEST(StoreConfigTest, ReadsTheSeedShapeAndKeepsHealthDefaults) {
  Result<PosixStoreConfig> cfg = ParseStoreConfig(R"(
storage_backends: "/mnt/path0:/mnt/path1/:/mnt//path2"
posix_io_engine: aio
io_direct: true
timeout_ms: 3000
store_health:
  enabled: false
  health_check_interval_s: 10
)", "store.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  // Compared and kept as upstream does: one trailing '/' goes, "//" inside stays.
  EXPECT_EQ(cfg->storage_backends, (std::vector<std::string>{"/mnt/path0", "/mnt/path1", "/mnt//path2"}));
  EXPECT_EQ(cfg->io_engine, IoEngineKind::kAio);
  EXPECT_TRUE(cfg->io_direct);
  EXPECT_EQ(cfg->timeout_ms, 3000);
  EXPECT_FALSE(cfg->health.enabled);
  EXPECT_EQ(cfg->health.health_window_size, 8);
  EXPECT_EQ(cfg->health.failure_threshold, 2);
  EXPECT_EQ(cfg->health.health_check_timeout_s, 3);
}

TEST(StoreConfigTest, ReadsAFullUpstreamConnectorFile) {
  Result<PosixStoreConfig> cfg = ParseStoreConfig(R"(
ucm_connectors:
  - ucm_connector_name: UcmPipelineStore
    ucm_connector_config:
      store_pipeline: Cache|Posix
      storage_backends: "/mnt/path0:/mnt/path1"
      posix_io_engine: psync
      io_direct: false
use_layerwise: true
)", "connector.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->storage_backends.size(), 2u);
  EXPECT_EQ(cfg->io_engine, IoEngineKind::kPsync);
}

TEST(StoreConfigTest, DurableCommitIsOffByDefaultAndReadWhenGiven) {
  Result<PosixStoreConfig> plain = ParseStoreConfig("storage_backends: \"/mnt/p0\"\n", "store.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_FALSE(plain->durable_commit) << "upstream's cache semantics are the default";
  Result<PosixStoreConfig> durable = ParseStoreConfig("storage_backends: \"/mnt/p0\"\ndurable_commit: true\n", "store.yaml");
  ASSERT_TRUE(durable.ok()) << durable.status().ToString();
  EXPECT_TRUE(durable->durable_commit);
  Result<PosixStoreConfig> bad = ParseStoreConfig("storage_backends: \"/mnt/p0\"\ndurable_commit: sometimes\n", "store.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("store.yaml:2: durable_commit"), std::string::npos) << bad.status().message();
}

TEST(StoreConfigTest, QueueBoundsHaveDefaultsAndAreReadAndChecked) {
  Result<PosixStoreConfig> plain = ParseStoreConfig("storage_backends: \"/mnt/p0\"\n", "store.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->max_inflight_shards, 65536);
  EXPECT_EQ(plain->max_pending_tasks, 65536);
  Result<PosixStoreConfig> set = ParseStoreConfig(
      "storage_backends: \"/mnt/p0\"\nmax_inflight_shards: 8\nmax_pending_tasks: 4\n", "store.yaml");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->max_inflight_shards, 8);
  EXPECT_EQ(set->max_pending_tasks, 4);
  Result<PosixStoreConfig> zero = ParseStoreConfig("storage_backends: \"/mnt/p0\"\nmax_pending_tasks: 0\n", "store.yaml");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("store.yaml:2: max_pending_tasks: must be in 1..16777216"), std::string::npos)
      << zero.status().message();
  PosixStoreConfig code;
  code.storage_backends = {"/mnt/p0"};
  code.max_inflight_shards = -1;
  Status s = code.NormalizeAndValidate();
  EXPECT_NE(s.message().find("max_inflight_shards: must be in 1..16777216, got -1"), std::string::npos) << s.ToString();
}

void ExpectProblem(const std::string& yaml, const std::string& want);

// Issue 18 §5: upstream compares the strings (one trailing '/' aside) and drops exact repeats, so
// "/b/." is a path of its own (n = 3, as upstream peers count it) and gets a warning.
TEST(StoreConfigTest, DuplicatePathsAreComparedAsStringsLikeUpstream) {
  PosixStoreConfig cfg;
  cfg.storage_backends = {"/b", "/a/", "/b/.", "/a"};
  ASSERT_TRUE(cfg.NormalizeAndValidate().ok());
  EXPECT_EQ(cfg.storage_backends, (std::vector<std::string>{"/b", "/a", "/b/."}));
  const std::vector<std::string> warnings = SameDirectoryWarnings(cfg.storage_backends);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("'/b' and '/b/.' are the same directory"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("n = 3"), std::string::npos) << warnings[0];
}

// Issue 18 §4: the keys an upstream connector config uses are read, with their meaning (see
// store_config.h); a value out of upstream's range and unknown keys are still refused.
TEST(StoreConfigTest, UpstreamKeysAreAccepted) {
  Result<PosixStoreConfig> cfg = ParseStoreConfig(
      "storage_backends: [\"/mnt/p0\", \"/mnt/p1/\"]\ndata_dir_shard_bytes: 2\ndevice_id: 0\nposix_gc_enable: true\n",
      "up.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->storage_backends, (std::vector<std::string>{"/mnt/p0", "/mnt/p1"})) << "the list form";
  EXPECT_EQ(cfg->data_dir_shard_bytes, 2);
  EXPECT_EQ(cfg->device_id, 0);
  EXPECT_TRUE(cfg->posix_gc_enable);
  Result<PosixStoreConfig> defaults = ParseStoreConfig("storage_backends: \"/a\"\ndata_dir_shard_bytes: 3\n", "d.yaml");
  ASSERT_TRUE(defaults.ok()) << "upstream's default width was refused: " << defaults.status().ToString();
  EXPECT_EQ(defaults->data_dir_shard_bytes, 3);
  EXPECT_EQ(defaults->device_id, -1);
  EXPECT_FALSE(defaults->posix_gc_enable);
  const nlohmann::json shown = StoreConfigToJson(*cfg);
  EXPECT_EQ(shown["data_dir_shard_bytes"], 2);
  EXPECT_EQ(shown["device_id"], 0);
  EXPECT_EQ(shown["posix_gc_enable"], true);
  ExpectProblem("storage_backends: \"/a\"\ndata_dir_shard_bytes: 6\n", "bad.yaml:2: data_dir_shard_bytes: must be in 0..5");
  ExpectProblem("storage_backends: \"/a\"\ndevice_id: -2\n", "bad.yaml:2: device_id: must be >= -1");
  ExpectProblem("storage_backends: [\"/a\", \"\"]\n", "empty path in the list");
  ExpectProblem("storage_backends: [\"/a\", \"rel\"]\n", "'rel' is not an absolute path");
  ExpectProblem("storage_backends: \"/a\"\nposix_gc_recycle_percents: 0.1\n", "unknown key");
}

void ExpectProblem(const std::string& yaml, const std::string& want) {
  Result<PosixStoreConfig> cfg = ParseStoreConfig(yaml, "bad.yaml");
  ASSERT_FALSE(cfg.ok()) << "accepted:\n" << yaml;
  EXPECT_EQ(cfg.status().code(), StatusCode::kInvalidConfig);
  EXPECT_NE(cfg.status().message().find(want), std::string::npos)
      << "message does not mention '" << want << "':\n" << cfg.status().message();
}

TEST(StoreConfigTest, InvalidValuesAreRejectedNamingFileLineAndKey) {
  ExpectProblem("storage_backends: \"/a\"\nstore_health:\n  health_window_size: 4\n  failure_threshold: 5\n",
                "bad.yaml:4");
  ExpectProblem("storage_backends: \"/a\"\nstore_health:\n  health_window_size: 4\n  failure_threshold: 5\n",
                "store_health.failure_threshold");
  ExpectProblem("storage_backends: \"/a\"\nstore_health:\n  health_check_interval_s: 2\n  health_check_timeout_s: 2\n",
                "health_check_timeout_s: must be < health_check_interval_s");
  ExpectProblem("storage_backends: \"/a\"\nstore_health:\n  health_window_size: 0\n", "health_window_size");
  ExpectProblem("storage_backends: \"/a\"\nstore_health:\n  health_check_interval_s: -1\n", "must be > 0");
  ExpectProblem("storage_backends: \"/a\"\nposix_io_engine: uring\n", "posix_io_engine: must be aio or psync");
  ExpectProblem("storage_backends: \"/a\"\ntimeout_ms: -5\n", "timeout_ms");
  ExpectProblem("storage_backends: \"relative:/b\"\n", "'relative' is not an absolute path");
  ExpectProblem("storage_backends: \"/a::/b\"\n", "empty path");
  ExpectProblem("posix_io_engine: aio\n", "storage_backends");
  ExpectProblem("storage_backends: \"/a\"\nio_direct: true\nshard_size: 1000\ntensor_size: 1000\nblock_size: 1000\n",
                "multiples of 4096");
  ExpectProblem("storage_backends: \"/a\"\nstorage_backend: \"/b\"\n", "unknown key");
}

TEST(StoreConfigTest, DurationsThatWouldWrapAndKeysGivenTwiceAreRefused) {
  // 9223372036855 ms used to wrap into an attempt timeout of 1 ms.
  ExpectProblem("storage_backends: \"/a\"\ntimeout_ms: 9223372036855\n", "bad.yaml:2: timeout_ms: 9223372036855 ms is out of range");
  ExpectProblem("storage_backends: \"/a\"\nstore_health:\n  health_check_interval_s: inf\n",
                "bad.yaml:3: store_health.health_check_interval_s: inf s is out of range");
  ExpectProblem("storage_backends: \"/a\"\ntimeout_ms: 30\ntimeout_ms: 1\n",
                "bad.yaml:3: timeout_ms: duplicate key (first given on line 2)");
}

TEST(StoreConfigTest, StructValidationNamesTheKeyAndChangesNothing) {
  PosixStoreConfig cfg;
  cfg.storage_backends = {"/a/", "/b"};
  cfg.health.failure_threshold = 9;
  Status s = cfg.NormalizeAndValidate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("store_health.failure_threshold: must be <= health_window_size"), std::string::npos)
      << s.message();
  EXPECT_EQ(cfg.storage_backends[0], "/a/") << "a rejected config must stay as it was";
}

}  // namespace
}  // namespace kvchaos::store

namespace kvchaos::store {
namespace {

TEST(StoreConfigTest, ShippedExampleIsValid) {
  Result<PosixStoreConfig> cfg = LoadStoreConfig(std::string(KVCHAOS_SOURCE_DIR) + "/core/store/store.example.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->storage_backends.size(), 3u);
  EXPECT_EQ(cfg->concurrency, 16);
}

}  // namespace
}  // namespace kvchaos::store
