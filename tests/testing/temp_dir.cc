#include "testing/temp_dir.h"

#include <filesystem>
#include <utility>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

namespace shoal::testing {

Result<TempDir> TempDir::create(const std::string& label) {
  const char* base = getenv("TMPDIR");
  std::string tmpl =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/shoal-" + label + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    return unavailable("tempdir-failed", "mkdtemp(" + tmpl + "): " + strerror(errno));
  }
  return TempDir(tmpl);
}

TempDir::TempDir(TempDir&& other) noexcept
    : path_(std::exchange(other.path_, "")), keep_(other.keep_) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    removeNow();
    path_ = std::exchange(other.path_, "");
    keep_ = other.keep_;
  }
  return *this;
}

TempDir::~TempDir() {
  removeNow();
}

void TempDir::removeNow() {
  if (path_.empty() || keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  path_.clear();
}

}  // namespace shoal::testing
