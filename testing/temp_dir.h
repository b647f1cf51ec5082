// A directory under $TMPDIR (or /tmp) removed with everything in it when the object goes away.
#pragma once

#include <filesystem>
#include <string>

namespace kvchaos::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "kvchaos");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace kvchaos::testing
