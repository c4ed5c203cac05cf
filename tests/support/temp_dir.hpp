#pragma once
// A fresh directory for one test on a real filesystem, removed with its content at the end.
// Every test binary has tests/support on its include path (drivelab_test in cmake/drivelab.cmake).
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace drivelab::test_support {

/// Which filesystem the directory is on.
enum class TempBase {
  system,      ///< $TMPDIR, else /tmp (std::filesystem::temp_directory_path)
  build_tree,  ///< <build dir>/test-scratch: the checkout's disk filesystem (O_DIRECT, swap files;
               ///< /tmp may be a tmpfs)
  memory,      ///< /dev/shm when present, else as `system`: for tests that check logic, not the
               ///< drive, and copy large files
};

/// mkdtemp("<base>/<prefix>-XXXXXX"); throws std::runtime_error when it cannot be created.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "drivelab-test", TempBase base = TempBase::system) {
    std::filesystem::path dir;
    std::error_code ec;
    switch (base) {
      case TempBase::system: dir = std::filesystem::temp_directory_path(); break;
      case TempBase::build_tree:
        dir = std::filesystem::path(DRIVELAB_BINARY_DIR) / "test-scratch";
        std::filesystem::create_directories(dir);
        break;
      case TempBase::memory:
        dir = std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm")
                                                            : std::filesystem::temp_directory_path();
        break;
    }
    std::string tmpl = (dir / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  /// Writes `text` to the file `name` in the directory and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

/// A TempDir under the system temp dir that every user can traverse and read (0755): the target
/// of a managed server, whose own user (postgres, mysql) must reach its data directory there.
class OpenTempDir : public TempDir {
 public:
  explicit OpenTempDir(std::string_view prefix) : TempDir(prefix) {
    namespace fs = std::filesystem;
    fs::permissions(path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  }
};

}  // namespace drivelab::test_support
