// BackendSet: fixed routing on the total count, wrap-around, skipping, return to the primary.
#include "core/store/backend_set.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/store/block_id.h"

namespace kvchaos::store {
namespace {

BackendSet MakeSet(int n) {
  std::vector<std::string> paths;
  for (int i = 0; i < n; ++i) paths.push_back("/p" + std::to_string(i));
  return BackendSet(Runtime::Real(), paths, 8, 2);
}

void Trip(BackendSet& set, int backend) {
  set.Record(backend, false, SampleSource::kBusiness);
  set.Record(backend, false, SampleSource::kBusiness);
  ASSERT_FALSE(set.available(backend));
}

void Recover(BackendSet& set, int backend) {
  for (int i = 0; i < 8; ++i) set.Record(backend, true, SampleSource::kProbe);
  ASSERT_TRUE(set.available(backend));
}

TEST(BackendSetTest, CandidateOrderWrapsAroundFromThePrimary) {
  BackendSet set = MakeSet(4);
  // a1b2…ab hashes to 3 (mod 4) upstream: the seed's example order 3 → 0 → 1 → 2.
  const uint64_t hash = BlockIdHasher{}(*BlockId::FromHex("a1b2c3d4e5f6789012345678901234ab"));
  EXPECT_EQ(set.CandidateOrder(hash), (std::vector<int>{3, 0, 1, 2}));
}

TEST(BackendSetTest, ModulusIsTheTotalCountEvenWhenPathsAreDown) {
  BackendSet set = MakeSet(4);
  const uint64_t hash = 6;  // primary 2
  Trip(set, 2);
  Trip(set, 0);
  EXPECT_EQ(set.CandidateOrder(hash), (std::vector<int>{3, 1}))
      << "routing must keep hash % 4 and walk forward past unavailable paths, not re-hash over 2 paths";
}

TEST(BackendSetTest, SelectNextSkipsTriedPathsAndEndsWithMinusOne) {
  BackendSet set = MakeSet(3);
  const uint64_t hash = 1;
  EXPECT_EQ(set.SelectNext(hash, 0), 1);
  EXPECT_EQ(set.SelectNext(hash, 0b010), 2);
  EXPECT_EQ(set.SelectNext(hash, 0b110), 0);
  EXPECT_EQ(set.SelectNext(hash, 0b111), -1);
}

TEST(BackendSetTest, BlockReturnsToItsPrimaryAfterRecovery) {
  BackendSet set = MakeSet(3);
  const uint64_t hash = 2;
  EXPECT_EQ(set.SelectNext(hash, 0), 2);
  Trip(set, 2);
  EXPECT_EQ(set.SelectNext(hash, 0), 0) << "fallback is the next path with wrap-around";
  Recover(set, 2);
  EXPECT_EQ(set.SelectNext(hash, 0), 2) << "after recovery the block must go back to its primary";
}

TEST(BackendSetTest, EmptyAvailableListHasNoCandidate) {
  BackendSet set = MakeSet(2);
  Trip(set, 0);
  Trip(set, 1);
  EXPECT_FALSE(set.any_available());
  EXPECT_EQ(set.SelectNext(0, 0), -1);
  EXPECT_TRUE(set.CandidateOrder(0).empty());
}

TEST(BackendSetTest, TransitionsAreLoggedAndReportedToTheListener) {
  BackendSet set = MakeSet(2);
  std::vector<std::pair<int, bool>> seen;
  set.SetListener([&](const HealthTransition& t) { seen.emplace_back(t.backend, t.available); });
  Trip(set, 1);
  Recover(set, 1);
  EXPECT_EQ(seen, (std::vector<std::pair<int, bool>>{{1, false}, {1, true}}));
  const auto log = set.Transitions();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].path, "/p1");
  EXPECT_EQ(log[0].source, SampleSource::kBusiness);
  EXPECT_EQ(log[1].source, SampleSource::kProbe);
}

TEST(BackendSetTest, SixtyFourBackendsRouteOverAllOfThem) {
  BackendSet set = MakeSet(64);
  EXPECT_EQ(set.CandidateOrder(63).size(), 64u);
  EXPECT_EQ(set.CandidateOrder(63).front(), 63);
  EXPECT_EQ(set.CandidateOrder(63)[1], 0);
}

// Routing reads the published snapshot while other threads record results and flip a path's
// state: every walk stays a walk (distinct candidates, at most n, ending with -1), concurrent
// business successes never restore the tripped path, and the transition log alternates strictly.
// (Run under TSan too: readers take no lock, so a data race here would be the lock-free claim failing.)
TEST(BackendSetTest, ConcurrentRoutingAndRecordingStayConsistent) {
  BackendSet set = MakeSet(4);
  std::atomic<bool> stop{false};
  std::atomic<int> bad_walks{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      uint64_t hash = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(r + 1);
      while (!stop.load()) {
        uint64_t tried = 0;
        int steps = 0;
        for (int b; (b = set.SelectNext(hash, tried)) >= 0;) {
          if (b >= set.size() || ((tried >> b) & 1) || ++steps > set.size()) {
            ++bad_walks;
            break;
          }
          tried |= 1ULL << b;
          set.Record(b, true, SampleSource::kBusiness);  // the I/O path's samples, on every path
        }
        hash = hash * 6364136223846793005ULL + 1442695040888963407ULL;
      }
    });
  }
  int flips = 0;
  for (; flips < 200; ++flips) {
    while (set.available(1)) set.Record(1, false, SampleSource::kBusiness);
    for (int i = 0; i < 1000 && set.available(1); ++i) std::this_thread::yield();
    EXPECT_FALSE(set.available(1)) << "a business success restored a tripped path";
    while (!set.available(1)) set.Record(1, true, SampleSource::kProbe);
  }
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad_walks.load(), 0) << "a candidate walk repeated a path, went out of range or did not end";
  EXPECT_EQ(set.available_mask(), 0xfULL);
  const auto log = set.Transitions();
  ASSERT_EQ(log.size(), 2u * static_cast<size_t>(flips));
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i].backend, 1);
    EXPECT_EQ(log[i].available, i % 2 == 1) << "transition " << i << " repeats the previous state";
  }
}

}  // namespace
}  // namespace kvchaos::store
