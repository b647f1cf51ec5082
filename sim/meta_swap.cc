// Swapping two cache entries of the meta index; see meta_swap.h.
#include "sim/meta_swap.h"

#include <map>

#include <nlohmann/json.hpp>

#include "core/meta/cache_location.h"
#include "core/meta/cache_manager.h"

namespace kvchaos::sim {
namespace {

bool Committed(const meta::MetaRecord& record) {
  auto field = record.find("locations");
  if (field == record.end()) return false;
  const nlohmann::json array = nlohmann::json::parse(field->second, nullptr, /*allow_exceptions=*/false);
  if (!array.is_array() || array.empty()) return false;
  for (const nlohmann::json& j : array) {
    Result<meta::CacheLocation> loc = meta::CacheLocation::FromJson(j, "meta-swap");
    if (!loc.ok() || loc->status != meta::LocationStatus::kServing) return false;
  }
  return true;
}

}  // namespace

Result<MetaSwap> SwapCacheEntries(meta::MetaIndexer& index, Rng& rng, const std::set<std::string>& exclude) {
  Result<std::vector<std::string>> listed = index.ListKeys(meta::CacheManager::kKeyPrefix);
  if (!listed.ok()) return listed.status().WithContext("meta-swap: listing the cache entries");
  Result<std::vector<std::optional<meta::MetaRecord>>> records = index.Get(*listed);
  if (!records.ok()) return records.status().WithContext("meta-swap: reading the cache entries");
  // Key order, whatever order the indexer lists in.
  std::map<std::string, meta::MetaRecord> candidates;
  for (size_t i = 0; i < listed->size(); ++i) {
    const std::string& key = (*listed)[i];
    if ((*records)[i] && !exclude.contains(key) && Committed(*(*records)[i])) candidates.emplace(key, *(*records)[i]);
  }
  if (candidates.size() < 2) {
    return Status::NotFound("meta-swap: fewer than two committed cache entries (" + std::to_string(candidates.size()) +
                            ") to swap");
  }
  const uint64_t a = rng.Uniform(candidates.size());
  uint64_t b = rng.Uniform(candidates.size() - 1);
  if (b >= a) ++b;
  const auto at = [&candidates](uint64_t n) { return std::next(candidates.begin(), static_cast<std::ptrdiff_t>(n)); };
  MetaSwap swap{{at(a)->first, at(b)->first}, at(a)->second, at(b)->second};
  Result<uint64_t> token = index.NewestFencingToken();
  if (!token.ok()) return token.status().WithContext("meta-swap: reading the newest fencing token");
  const std::vector<meta::MetaWrite> swapped = {{swap.keys[0], swap.second}, {swap.keys[1], swap.first}};
  KVCHAOS_RETURN_IF_ERROR(index.Put(*token, swapped));
  return swap;
}

Result<bool> SwapBack(meta::MetaIndexer& index, const MetaSwap& swap) {
  Result<std::vector<std::optional<meta::MetaRecord>>> now = index.Get(swap.keys);
  if (!now.ok()) return now.status().WithContext("meta-swap: reading the swapped entries back");
  if ((*now)[0] != swap.second || (*now)[1] != swap.first) return false;
  Result<uint64_t> token = index.NewestFencingToken();
  if (!token.ok()) return token.status().WithContext("meta-swap: reading the newest fencing token");
  const std::vector<meta::MetaWrite> back = {{swap.keys[0], swap.first}, {swap.keys[1], swap.second}};
  KVCHAOS_RETURN_IF_ERROR(index.Put(*token, back));
  return true;
}

}  // namespace kvchaos::sim
