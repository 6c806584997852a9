#include "app/server/web_dir.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

// Set by app/server/CMakeLists.txt.
#ifndef RAGD_WEB_DIR_FROM_BINARY
#define RAGD_WEB_DIR_FROM_BINARY "../share/ragd/web"
#endif
#ifndef RAGD_BUILD_TREE
#define RAGD_BUILD_TREE ""
#endif
#ifndef RAGD_SOURCE_WEB_DIR
#define RAGD_SOURCE_WEB_DIR "web"
#endif

namespace ragd::app {
namespace fs = std::filesystem;

namespace {

// Whether `path` is `dir` or lies below it (both made absolute and normal).
bool Inside(const fs::path& path, const fs::path& dir) {
  if (dir.empty()) return false;
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  const fs::path d = fs::weakly_canonical(dir, ec);
  if (ec) return false;
  auto [d_end, p_at] = std::mismatch(d.begin(), d.end(), p.begin(), p.end());
  return d_end == d.end();
}

}  // namespace

std::string DefaultWebDirFor(const std::string& exe_path) {
  const fs::path installed = (fs::path(exe_path).parent_path() / RAGD_WEB_DIR_FROM_BINARY).lexically_normal();
  std::error_code ec;
  if (fs::is_directory(installed, ec)) return installed.string();
  if (Inside(exe_path, RAGD_BUILD_TREE)) return RAGD_SOURCE_WEB_DIR;
  return installed.string();
}

std::string DefaultWebDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return RAGD_SOURCE_WEB_DIR;
  return DefaultWebDirFor(exe.string());
}

}  // namespace ragd::app
