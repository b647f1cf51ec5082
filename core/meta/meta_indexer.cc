// OpenMetaIndexer: picks the backend from the URI scheme.
#include "core/meta/meta_indexer.h"

#include "core/meta/local_meta_indexer.h"
#include "core/meta/redis_meta_indexer.h"

namespace kvchaos::meta {

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
