// CacheManager: write sessions, checksums into meta and back, old clients without checksums,
// length mismatches, merged locations carrying the winner's checksum, and fencing. IOV layouts
// persist with the checksums through the local (file, restart) and Redis indexers.
#include "core/meta/cache_manager.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <thread>

#include "core/meta/local_meta_indexer.h"
#include "testing/redis_server.h"
#include "testing/temp_dir.h"

namespace kvchaos::meta {
namespace {

using integrity::ChecksumAlgo;

StorageConfig Storage(const std::string& name, ChecksumAlgo algo = ChecksumAlgo::kCrc64Full) {
  StorageConfig c;
  c.type = "posix";
  c.global_unique_name = name;
  c.integrity.enable_meta_checksum = true;
  c.integrity.algo = algo;
  return c;
}

class CacheManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registry_.AddStorage(Storage("nfs"), 1).ok());
    manager_.SetFencingToken(1);
  }
  std::vector<std::optional<CacheLocation>> Get(std::vector<std::string> keys) {
    auto r = manager_.GetCacheLocation(keys);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<std::optional<CacheLocation>>{};
  }

  LocalMetaIndexer indexer_;
  StorageRegistry registry_{indexer_};
  CacheManager manager_{indexer_, registry_};
};

TEST_F(CacheManagerTest, ChecksumsGoInAndComeBack) {
  const std::vector<std::string> keys{"k0", "k1", "k2"};
  Result<WriteSession> s = manager_.StartWriteCache(keys);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->to_write, (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(s->integrity.algo, ChecksumAlgo::kCrc64Full);
  EXPECT_EQ(s->locations[1].uri, CacheManager::BlockIdHexForKey("k1"));
  EXPECT_EQ(s->locations[1].uri.size(), 32u);

  // Writing locations are not served yet.
  EXPECT_FALSE(Get(keys)[0].has_value());

  const std::vector<int64_t> sums{0, -5, 1234};
  ASSERT_TRUE(manager_.FinishWriteCache(s->session_id, keys, sums).ok());
  auto got = Get(keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(got[i].has_value()) << keys[i];
    EXPECT_EQ(got[i]->status, LocationStatus::kServing);
    EXPECT_TRUE(got[i]->checksum_present) << "0 is a legal checksum";
    EXPECT_EQ(got[i]->checksum, sums[i]);
    EXPECT_EQ(got[i]->checksum_algo, ChecksumAlgo::kCrc64Full);
  }

  // A second write of the same keys finds them cached.
  Result<WriteSession> again = manager_.StartWriteCache(keys);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->to_write, (std::vector<uint8_t>{0, 0, 0}));
  ASSERT_TRUE(manager_.FinishWriteCache(again->session_id, keys, sums).ok());
}

TEST_F(CacheManagerTest, LengthMismatchIsBadArgsAndChangesNothing) {
  const std::vector<std::string> keys{"a", "b"};
  Result<WriteSession> s = manager_.StartWriteCache(keys);
  ASSERT_TRUE(s.ok());
  const std::vector<int64_t> one{7};
  EXPECT_EQ(manager_.FinishWriteCache(s->session_id, keys, one).code(), StatusCode::kInvalidArgument);
  const std::vector<int64_t> two{7, 8};
  const std::vector<uint8_t> flags{1};
  EXPECT_EQ(manager_.FinishWriteCache(s->session_id, keys, two, flags).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(Get(keys)[0].has_value()) << "a rejected finish must not commit anything";
  ASSERT_TRUE(manager_.FinishWriteCache(s->session_id, keys, two).ok());
}

TEST_F(CacheManagerTest, OldClientWithoutChecksumsKeepsLocationsWithoutChecksum) {
  const std::vector<std::string> keys{"a"};
  Result<WriteSession> s = manager_.StartWriteCache(keys);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(manager_.FinishWriteCache(s->session_id, keys).ok());
  auto got = Get(keys);
  ASSERT_TRUE(got[0].has_value());
  EXPECT_FALSE(got[0]->checksum_present) << "no checksum sent: reader must skip, not fail";
}

TEST_F(CacheManagerTest, AbsentFlagsStoreNoChecksum) {
  const std::vector<std::string> keys{"a", "b"};
  Result<WriteSession> s = manager_.StartWriteCache(keys);
  ASSERT_TRUE(s.ok());
  const std::vector<int64_t> sums{11, 22};
  const std::vector<uint8_t> flags{0, 1};
  ASSERT_TRUE(manager_.FinishWriteCache(s->session_id, keys, sums, flags).ok());
  auto got = Get(keys);
  EXPECT_FALSE(got[0]->checksum_present);
  EXPECT_TRUE(got[1]->checksum_present);
  EXPECT_EQ(got[1]->checksum, 22);
}

TEST_F(CacheManagerTest, MergedLocationCarriesTheWinnersChecksum) {
  ASSERT_TRUE(registry_.AddStorage(Storage("ssd", ChecksumAlgo::kCrc32XorInt64), 1).ok());
  const std::vector<std::string> keys{"k"};
  Result<WriteSession> first = manager_.StartWriteCache(keys, "nfs");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::vector<int64_t> nfs_sum{111};
  ASSERT_TRUE(manager_.FinishWriteCache(first->session_id, keys, nfs_sum).ok());
  Result<WriteSession> second = manager_.StartWriteCache(keys, "ssd");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->to_write, (std::vector<uint8_t>{1})) << "another storage gets its own copy";
  const std::vector<int64_t> ssd_sum{222};
  ASSERT_TRUE(manager_.FinishWriteCache(second->session_id, keys, ssd_sum).ok());
  auto got = Get(keys);
  ASSERT_TRUE(got[0].has_value());
  EXPECT_EQ(got[0]->storage, "nfs");
  EXPECT_EQ(got[0]->checksum, 111) << "the winner's own checksum, not the other copy's";
  EXPECT_EQ(got[0]->checksum_algo, ChecksumAlgo::kCrc64Full);

  // With two storages the caller must name one.
  EXPECT_EQ(manager_.StartWriteCache(keys).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(CacheManagerTest, FinishWithAnotherSessionIsRejected) {
  const std::vector<std::string> keys{"a"};
  Result<WriteSession> s = manager_.StartWriteCache(keys);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(manager_.FinishWriteCache("ws-bogus", keys).code(), StatusCode::kInvalidArgument);
}

// A StartWriteCache that reaches the leader again after its own retry was answered (bytes sent into
// a partition arrive at the heal) must not take over the locations the client is writing.
TEST_F(CacheManagerTest, ALateCopyOfAnAnsweredStartGetsItsSessionAndTakesNothingOver) {
  const std::vector<std::string> keys{"a", "b"};
  Result<WriteSession> retry = manager_.StartWriteCache(keys, "", "client-1");
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  Result<WriteSession> late = manager_.StartWriteCache(keys, "", "client-1");
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  EXPECT_EQ(late->session_id, retry->session_id) << "a copy of an answered request must get the same session";
  EXPECT_EQ(late->to_write, retry->to_write);
  EXPECT_EQ(late->locations, retry->locations);
  EXPECT_EQ(late->fencing_token, retry->fencing_token);
  Status finish = manager_.FinishWriteCache(retry->session_id, keys);
  ASSERT_TRUE(finish.ok()) << "the late copy took the locations over from the client's session: " << finish.ToString();

  // Once committed, a copy says there is nothing to write, and changes nothing.
  Result<WriteSession> later = manager_.StartWriteCache(keys, "", "client-1");
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->to_write, (std::vector<uint8_t>{0, 0}));
  EXPECT_TRUE(Get(keys)[0].has_value());
}

TEST_F(CacheManagerTest, OtherRequestsStillTakeOverAnUnfinishedWrite) {
  const std::vector<std::string> keys{"a"};
  Result<WriteSession> first = manager_.StartWriteCache(keys, "", "client-1");
  ASSERT_TRUE(first.ok());
  // Another request (another id, or the same id reused for other keys) is another writer.
  Result<WriteSession> other = manager_.StartWriteCache(keys, "", "client-2");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->session_id, first->session_id);
  const std::vector<std::string> more{"a", "b"};
  Result<WriteSession> reused = manager_.StartWriteCache(more, "", "client-2");
  ASSERT_TRUE(reused.ok());
  EXPECT_NE(reused->session_id, other->session_id) << "an id reused for other keys is a new request";
  EXPECT_EQ(manager_.FinishWriteCache(first->session_id, keys).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(manager_.FinishWriteCache(reused->session_id, more).ok());
}

TEST_F(CacheManagerTest, ABadRequestIdIsRefusedAndChangesNothing) {
  const std::vector<std::string> keys{"a"};
  Result<WriteSession> long_id = manager_.StartWriteCache(keys, "", std::string(129, 'x'));
  EXPECT_EQ(long_id.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(long_id.status().message().find("request_id"), std::string::npos) << long_id.status().ToString();
  EXPECT_EQ(manager_.StartWriteCache(keys, "", std::string("\xff", 1)).status().code(), StatusCode::kInvalidArgument);
  Result<WriteSession> s = manager_.StartWriteCache(keys);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->to_write, (std::vector<uint8_t>{1})) << "the refused requests wrote nothing";
}

TEST_F(CacheManagerTest, RemoveCacheForgetsKeys) {
  const std::vector<std::string> keys{"a", "b"};
  Result<WriteSession> s = manager_.StartWriteCache(keys);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(manager_.FinishWriteCache(s->session_id, keys).ok());
  const std::vector<std::string> a{"a"};
  ASSERT_TRUE(manager_.RemoveCache(a).ok());
  auto got = Get(keys);
  EXPECT_FALSE(got[0].has_value());
  EXPECT_TRUE(got[1].has_value());
}

// An index whose Puts and Deletes are recorded, so a test can deliver one again later: the
// attempt of a write that was only slow, landing after the writes that followed it.
class ReplayableIndexer final : public MetaIndexer {
 public:
  std::string Describe() const override { return "replayable(" + inner_.Describe() + ")"; }
  Status Put(uint64_t token, std::span<const MetaWrite> writes) override {
    puts_.push_back({token, std::vector<MetaWrite>(writes.begin(), writes.end())});
    return inner_.Put(token, writes);
  }
  Status Delete(uint64_t token, std::span<const std::string> keys, std::span<const std::string> expected,
                std::string_view delete_id) override {
    deletes_.push_back({token, std::vector<std::string>(keys.begin(), keys.end()),
                        std::vector<std::string>(expected.begin(), expected.end()), std::string(delete_id)});
    return inner_.Delete(token, keys, expected, delete_id);
  }
  Result<std::vector<std::optional<MetaRecord>>> Get(std::span<const std::string> keys) override { return inner_.Get(keys); }
  Result<std::vector<std::string>> ListKeys(std::string_view prefix) override { return inner_.ListKeys(prefix); }
  Result<uint64_t> NewestFencingToken() override { return inner_.NewestFencingToken(); }
  Status RaiseFence(uint64_t token) override { return inner_.RaiseFence(token); }

  // The n-th Put (0 = the first), delivered again.
  Status ReplayPut(size_t n) { return inner_.Put(puts_.at(n).first, puts_.at(n).second); }
  size_t puts() const { return puts_.size(); }
  // The same for the n-th Delete.
  Status ReplayDelete(size_t n) {
    const RecordedDelete& d = deletes_.at(n);
    return inner_.Delete(d.token, d.keys, d.expected, d.delete_id);
  }
  size_t deletes() const { return deletes_.size(); }

 private:
  struct RecordedDelete {
    uint64_t token;
    std::vector<std::string> keys, expected;
    std::string delete_id;
  };
  LocalMetaIndexer inner_;
  std::vector<std::pair<uint64_t, std::vector<MetaWrite>>> puts_;
  std::vector<RecordedDelete> deletes_;
};

// A manager over an index whose calls can be delivered again: the late attempt of a write that
// was only slow, landing after the writes that followed it.
class CacheManagerLateWrites : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registry_.AddStorage(Storage("nfs"), 1).ok());
    manager_.SetFencingToken(1);
    manager_.SetSoleIssuerOfToken(true);  // as a node's term
  }
  // Saves key "k" with `checksum` (Start, then Finish).
  void Write(int64_t checksum) {
    Result<WriteSession> s = manager_.StartWriteCache(keys_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE(manager_.FinishWriteCache(s->session_id, keys_, std::vector<int64_t>{checksum}).ok());
  }
  // The checksum "k" is served with (nullopt: not cached).
  std::optional<int64_t> Served() {
    auto got = manager_.GetCacheLocation(keys_);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (!got.ok() || !(*got)[0].has_value()) return std::nullopt;
    return (*got)[0]->checksum;
  }

  ReplayableIndexer indexer_;
  StorageRegistry registry_{indexer_};
  CacheManager manager_{indexer_, registry_};
  const std::vector<std::string> keys_{"k"};
};

// Seed 87765 of the whole-product soak: StartWriteCache's index write was sent twice (the first
// attempt slow), FinishWriteCache made the block serving, then the slow attempt landed and put
// the entry back to "writing": an acknowledged block no longer found.
TEST_F(CacheManagerLateWrites, ALateAttemptOfStartCannotUndoAFinishedWrite) {
  const size_t start_put = indexer_.puts();
  Write(42);
  const Status late = indexer_.ReplayPut(start_put);
  EXPECT_EQ(late.code(), StatusCode::kConflict) << "the late attempt was applied: " << late.ToString();
  EXPECT_EQ(Served(), std::optional<int64_t>(42)) << "the acknowledged block is no longer served after a late index write";
}

// A RemoveCache whose index delete was slow, the block written again and acknowledged, then the
// slow attempt of the delete landing: it must not delete the block written after it was sent.
TEST_F(CacheManagerLateWrites, ALateAttemptOfRemoveCannotDeleteABlockWrittenAfterIt) {
  Write(41);
  const size_t remove = indexer_.deletes();
  ASSERT_TRUE(manager_.RemoveCache(keys_).ok());
  EXPECT_EQ(Served(), std::nullopt) << "RemoveCache did not remove the block";
  Write(42);
  const Status late = indexer_.ReplayDelete(remove);
  EXPECT_TRUE(late.ok()) << "the late attempt of a delete is answered as done: " << late.ToString();
  EXPECT_EQ(Served(), std::optional<int64_t>(42)) << "the late attempt of a RemoveCache deleted a block acknowledged after it";
}

TEST_F(CacheManagerTest, ADeposedLeadersWritesAreRejected) {
  CacheManager new_leader(indexer_, registry_);
  new_leader.SetFencingToken(2);
  const std::vector<std::string> keys{"a"};
  ASSERT_TRUE(new_leader.StartWriteCache(keys).ok());
  // The old leader (token 1) wakes up and tries to write.
  Result<WriteSession> stale = manager_.StartWriteCache(keys);
  EXPECT_EQ(stale.status().code(), StatusCode::kStaleFencingToken) << stale.status().ToString();
  EXPECT_EQ(manager_.RemoveCache(keys).code(), StatusCode::kStaleFencingToken);
}

TEST_F(CacheManagerTest, KeysThatAreNotUtf8AreRejectedNotCrashed) {
  const std::vector<std::string> keys{"ok", std::string("bad\xD0", 4)};
  EXPECT_EQ(manager_.StartWriteCache(keys).status().code(), StatusCode::kInvalidArgument);
  std::vector<MetaWrite> w{{std::string("\xFF"), {{"f", "v"}}}};
  EXPECT_EQ(indexer_.Put(1, w).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsValidUtf8("k\xC3\xA9y"));
  EXPECT_FALSE(IsValidUtf8("\xC0\x80")) << "overlong";
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80")) << "surrogate";
}

TEST_F(CacheManagerTest, ConcurrentWritersOfOneKeyOnTwoStoragesKeepBothLocations) {
  ASSERT_TRUE(registry_.AddStorage(Storage("ssd"), 1).ok());
  constexpr int kKeys = 50;
  auto writer = [this](const std::string& storage) {
    for (int i = 0; i < kKeys; ++i) {
      const std::vector<std::string> keys{"k" + std::to_string(i)};
      Result<WriteSession> s = manager_.StartWriteCache(keys, storage);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      const std::vector<int64_t> sums{i};
      ASSERT_TRUE(manager_.FinishWriteCache(s->session_id, keys, sums).ok());
    }
  };
  std::thread a(writer, "nfs");
  std::thread b(writer, "ssd");
  a.join();
  b.join();
  for (int i = 0; i < kKeys; ++i) {
    const std::vector<std::string> index_key{"cache:k" + std::to_string(i)};
    auto record = (*indexer_.Get(index_key))[0];
    ASSERT_TRUE(record.has_value());
    const auto locations = nlohmann::json::parse(record->at("locations"));
    EXPECT_EQ(locations.size(), 2u) << "key k" << i << ": a concurrent writer's location was lost";
  }
}

TEST_F(CacheManagerTest, UnknownStorageAndNoStorage) {
  const std::vector<std::string> keys{"a"};
  EXPECT_EQ(manager_.StartWriteCache(keys, "nope").status().code(), StatusCode::kNotFound);
  LocalMetaIndexer empty_idx;
  StorageRegistry empty_reg(empty_idx);
  CacheManager empty(empty_idx, empty_reg);
  EXPECT_EQ(empty.StartWriteCache(keys).status().code(), StatusCode::kUnavailable);
}

IovLayout Layout(std::vector<uint64_t> sizes) {
  Result<IovLayout> l = IovLayout::FromSizes(sizes);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return l.ok() ? *l : IovLayout();
}

TEST_F(CacheManagerTest, IovLayoutsPersistWithTheChecksums) {
  const std::vector<std::string> keys{"k0", "k1", "k2"};
  Result<WriteSession> s = manager_.StartWriteCache(keys);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::vector<int64_t> sums{1, 2, 3};
  const std::vector<IovLayout> layouts{Layout(std::vector<uint64_t>(64, 65536)), IovLayout(), Layout({100, 200})};
  ASSERT_TRUE(manager_.FinishWriteCache(s->session_id, keys, sums, {}, layouts).ok());
  auto got = Get(keys);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0]->iov_layout, layouts[0]);
  EXPECT_EQ(got[0]->iov_layout.ToJson(), nlohmann::json::parse("[[64, 65536]]")) << "one run for 64 equal IOVs";
  EXPECT_FALSE(got[1]->iov_layout.known()) << "an unknown layout stores none";
  EXPECT_EQ(got[2]->iov_layout, layouts[2]);
  EXPECT_EQ(got[2]->checksum, 3);
}

// The manager keeps the entries it parsed or wrote, to skip parsing them again: what it answers
// must be exactly what a manager that parses the stored text answers, and an entry another node
// changed in the index must be read afresh.
TEST_F(CacheManagerTest, KeptEntriesAnswerWhatTheIndexHolds) {
  const std::vector<std::string> keys{"k0", "k1", "k2", "k3"};
  Result<WriteSession> s = manager_.StartWriteCache(keys);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // k3 stays writing; k0 has no checksum (an absent flag), k1 a layout, k2 an inline header.
  const std::vector<std::string> finished{"k0", "k1", "k2"};
  const std::vector<int64_t> sums{77, -5, 1234};
  const std::vector<uint8_t> present{0, 1, 1};
  const std::vector<IovLayout> layouts{IovLayout(), Layout({100, 200}), IovLayout()};
  ASSERT_TRUE(manager_.FinishWriteCache(s->session_id, finished, sums, present, layouts, 1).ok());

  CacheManager cold(indexer_, registry_);  // parses every entry from the index's text
  const std::vector<std::optional<CacheLocation>> parsed = *cold.GetCacheLocation(keys);
  EXPECT_EQ(Get(keys), parsed) << "an entry kept from a write differs from the same entry parsed from the index";
  EXPECT_EQ(Get(keys), parsed) << "an entry kept from a read differs from the same entry parsed from the index";
  EXPECT_FALSE(parsed[0]->checksum_present);
  EXPECT_EQ(parsed[0]->checksum, 0) << "no checksum reads as 0";

  // Another manager (a new leader) rewrites k1: the first one must answer the new entry.
  cold.SetFencingToken(2);
  Result<WriteSession> other = cold.StartWriteCache(std::vector<std::string>{"k3"});
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  ASSERT_TRUE(cold.RemoveCache(std::vector<std::string>{"k1"}).ok());
  Result<WriteSession> again = cold.StartWriteCache(std::vector<std::string>{"k1"});
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(cold.FinishWriteCache(again->session_id, std::vector<std::string>{"k1"}, std::vector<int64_t>{99}).ok());
  auto got = Get(keys);
  ASSERT_TRUE(got[1].has_value());
  EXPECT_EQ(got[1]->checksum, 99) << "the manager answered its kept entry, not the one the index holds now";
  EXPECT_EQ(got, *cold.GetCacheLocation(keys));
}

// A node keeps the entries it parsed across its terms (MetaNode hands every term's manager one
// ParsedEntries): a new term's manager answers from what the earlier term kept, exactly what
// parsing the index gives, and an entry changed meanwhile by another node is read afresh.
TEST_F(CacheManagerTest, ManagersOfSuccessiveTermsShareParsedEntries) {
  ParsedEntries shared;
  const std::vector<std::string> keys{"k0", "k1"};
  {
    CacheManager term1(indexer_, registry_, Runtime::Real(), &shared);
    term1.SetFencingToken(1);
    Result<WriteSession> s = term1.StartWriteCache(keys);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE(term1.FinishWriteCache(s->session_id, keys, std::vector<int64_t>{7, 8}).ok());
  }
  EXPECT_EQ(shared.size(), 2u) << "the first term's writes were not kept in the shared entries";
  // Another node rewrites k1.
  CacheManager other(indexer_, registry_);
  other.SetFencingToken(2);
  ASSERT_TRUE(other.RemoveCache(std::vector<std::string>{"k1"}).ok());
  Result<WriteSession> s = other.StartWriteCache(std::vector<std::string>{"k1"});
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(other.FinishWriteCache(s->session_id, std::vector<std::string>{"k1"}, std::vector<int64_t>{99}).ok());
  CacheManager term3(indexer_, registry_, Runtime::Real(), &shared);
  auto got = term3.GetCacheLocation(keys);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  CacheManager cold(indexer_, registry_);
  EXPECT_EQ(*got, *cold.GetCacheLocation(keys)) << "a shared kept entry differs from what the index holds";
  ASSERT_TRUE((*got)[1].has_value());
  EXPECT_EQ((*got)[1]->checksum, 99) << "the shared entries answered the old text of an entry another node changed";
}

// Entries the index holds in forms LocationsJson does not write (an older writer's key order,
// another spacing) are read by the JSON parser; a damaged entry is an error naming the key and
// the index, whichever reader saw it first.
TEST_F(CacheManagerTest, EntriesOfOtherWritersAreParsedAndDamagedOnesNamed) {
  auto put = [&](const std::string& key, MetaRecord record) {
    const MetaWrite write{std::string(CacheManager::kKeyPrefix) + key, std::move(record), "", ""};
    ASSERT_TRUE(indexer_.Put(1, std::span<const MetaWrite>(&write, 1)).ok());
  };
  put("older", MetaRecord{{"locations", R"([ {"uri": "u", "storage": "nfs", "status": "serving"} ])"}});
  std::vector<std::optional<CacheLocation>> got = Get({"older"});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].has_value()) << "an older writer's entry was not read";
  EXPECT_EQ(got[0]->uri, "u");
  EXPECT_EQ(got[0]->storage, "nfs");

  put("damaged", MetaRecord{{"locations", R"([{"storage":"nfs","uri":"u","status":"serving")"}});
  Result<std::vector<std::optional<CacheLocation>>> bad = manager_.GetCacheLocation(std::vector<std::string>{"damaged"});
  ASSERT_FALSE(bad.ok()) << "a damaged entry was answered";
  EXPECT_EQ(bad.status().message(), "cache entry 'damaged' in memory://: 'locations' is not a JSON array");

  put("fieldless", MetaRecord{{"other", "x"}});
  bad = manager_.GetCacheLocation(std::vector<std::string>{"fieldless"});
  ASSERT_FALSE(bad.ok()) << "an entry without locations was answered";
  EXPECT_EQ(bad.status().message(), "cache entry 'fieldless' in memory://: no 'locations' field");
}

TEST_F(CacheManagerTest, LayoutCountMismatchIsBadArgsAndChangesNothing) {
  const std::vector<std::string> keys{"k0", "k1"};
  Result<WriteSession> s = manager_.StartWriteCache(keys);
  ASSERT_TRUE(s.ok());
  const std::vector<int64_t> sums{1, 2};
  const std::vector<IovLayout> one{Layout({4096})};
  Status bad = manager_.FinishWriteCache(s->session_id, keys, sums, {}, one);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument) << bad.ToString();
  EXPECT_NE(bad.message().find("1 IOV layouts for 2 keys"), std::string::npos) << bad.ToString();
  EXPECT_FALSE(Get(keys)[0].has_value()) << "a rejected finish must not commit";
  // An old client sends checksums but no layouts: committed, layout unknown.
  ASSERT_TRUE(manager_.FinishWriteCache(s->session_id, keys, sums).ok());
  auto got = Get(keys);
  ASSERT_TRUE(got[0].has_value());
  EXPECT_TRUE(got[0]->checksum_present);
  EXPECT_FALSE(got[0]->iov_layout.known());
}

TEST(CacheManagerOnFile, IovLayoutsSurviveARestartOfTheLocalIndexer) {
  kvchaos::testing::TempDir dir("kvchaos-layout");
  const std::string path = dir.str() + "/meta.json";
  const std::vector<std::string> keys{"a", "b"};
  const std::vector<IovLayout> layouts{Layout({1000, 8000, 8000, 13000}), Layout(std::vector<uint64_t>(3, 7))};
  {
    auto indexer = LocalMetaIndexer::Open(path);
    ASSERT_TRUE(indexer.ok()) << indexer.status().ToString();
    StorageRegistry registry(**indexer);
    ASSERT_TRUE(registry.AddStorage(Storage("nfs"), 1).ok());
    CacheManager manager(**indexer, registry);
    manager.SetFencingToken(1);
    Result<WriteSession> s = manager.StartWriteCache(keys);
    ASSERT_TRUE(s.ok());
    const std::vector<int64_t> sums{5, 6};
    ASSERT_TRUE(manager.FinishWriteCache(s->session_id, keys, sums, {}, layouts).ok());
  }
  auto indexer = LocalMetaIndexer::Open(path);
  ASSERT_TRUE(indexer.ok()) << indexer.status().ToString();
  StorageRegistry registry(**indexer);
  ASSERT_TRUE(registry.Recover().ok());
  CacheManager manager(**indexer, registry);
  auto got = manager.GetCacheLocation(keys);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE((*got)[i].has_value()) << keys[i];
    EXPECT_EQ((*got)[i]->iov_layout, layouts[i]) << keys[i] << ": " << (*got)[i]->iov_layout.ToString();
  }
}

// The same round trip through a real redis-server: checksums (0 and negative included) and IOV
// layouts survive Redis, and a fresh registry recovers the storage config from it.
TEST(CacheManagerOnRedis, ChecksumsAndRegistryRoundTripThroughRedis) {
  auto redis = kvchaos::testing::RedisServer::Start();
  if (!redis) GTEST_SKIP() << kvchaos::testing::RedisServer::SkipReason();
  auto indexer = OpenMetaIndexer(redis->uri());
  ASSERT_TRUE(indexer.ok()) << indexer.status().ToString();
  {
    StorageRegistry registry(**indexer);
    ASSERT_TRUE(registry.AddStorage(Storage("nfs"), 3).ok());
    CacheManager manager(**indexer, registry);
    manager.SetFencingToken(3);
    const std::vector<std::string> keys{"a", "b", "c"};
    Result<WriteSession> s = manager.StartWriteCache(keys);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    const std::vector<int64_t> sums{0, -1, INT64_MIN};
    const std::vector<IovLayout> layouts{Layout(std::vector<uint64_t>(64, 65536)), Layout({2, 3, 3}), IovLayout()};
    ASSERT_TRUE(manager.FinishWriteCache(s->session_id, keys, sums, {}, layouts).ok());
  }
  // A new leader process: recovers the registry and reads the locations back.
  StorageRegistry registry(**indexer);
  Result<size_t> recovered = registry.Recover();
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  EXPECT_EQ(*recovered, 1u);
  CacheManager manager(**indexer, registry);
  manager.SetFencingToken(4);
  const std::vector<std::string> keys{"a", "b", "c", "d"};
  auto got = manager.GetCacheLocation(keys);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const int64_t want[] = {0, -1, INT64_MIN};
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE((*got)[i].has_value()) << keys[i];
    EXPECT_TRUE((*got)[i]->checksum_present);
    EXPECT_EQ((*got)[i]->checksum, want[i]);
    EXPECT_EQ((*got)[i]->checksum_algo, ChecksumAlgo::kCrc64Full);
  }
  EXPECT_EQ((*got)[0]->iov_layout.ToString(), "64 x 65536 bytes");
  EXPECT_EQ((*got)[1]->iov_layout.ToString(), "1 x 2 + 2 x 3 bytes");
  EXPECT_FALSE((*got)[2]->iov_layout.known());
  EXPECT_FALSE((*got)[3].has_value());
  // The old leader (token 3) is fenced off now that token 4 has written.
  const std::vector<std::string> a{"a"};
  ASSERT_TRUE(manager.RemoveCache(a).ok());
  CacheManager old_leader(**indexer, registry);
  old_leader.SetFencingToken(3);
  EXPECT_EQ(old_leader.RemoveCache(keys).code(), StatusCode::kStaleFencingToken);
}

}  // namespace
}  // namespace kvchaos::meta
