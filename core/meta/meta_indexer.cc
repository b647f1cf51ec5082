// OpenMetaIndexer: picks the backend from the URI scheme.
#include "core/meta/meta_indexer.h"

#include "core/meta/local_meta_indexer.h"
#include "core/meta/redis_meta_indexer.h"

namespace kvchaos::meta {

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += len;
  }
  return true;
}

Result<std::unique_ptr<MetaIndexer>> OpenMetaIndexer(std::string_view uri) {
  if (uri == "memory://") return std::unique_ptr<MetaIndexer>(std::make_unique<LocalMetaIndexer>());
  if (uri.starts_with("local://")) {
    const std::string path(uri.substr(std::string_view("local://").size()));
    if (path.empty() || path[0] != '/') {
      return Status::InvalidConfig("meta indexer URI '" + std::string(uri) +
                                   "': path: expected an absolute file path (local:///dir/meta.json)");
    }
    Result<std::unique_ptr<LocalMetaIndexer>> local = LocalMetaIndexer::Open(path);
    if (!local.ok()) return local.status();
    return std::unique_ptr<MetaIndexer>(std::move(*local));
  }
  if (uri.starts_with("redis://")) {
    Result<RedisIndexerOptions> options = RedisIndexerOptions::FromUri(uri);
    if (!options.ok()) return options.status();
    Result<std::unique_ptr<RedisMetaIndexer>> redis = RedisMetaIndexer::Open(*options);
    if (!redis.ok()) return redis.status();
    return std::unique_ptr<MetaIndexer>(std::move(*redis));
  }
  return Status::InvalidConfig("meta indexer URI '" + std::string(uri) +
                               "': scheme: unknown (known: memory://, local:///path, redis://host:port)");
}

}  // namespace kvchaos::meta
