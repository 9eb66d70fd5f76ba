// TempDir: a private temporary directory for one test, removed (recursively) when destroyed.
//
// Created with mkdtemp under $TMPDIR (or /tmp), mode 0700, named `shoal-<label>-XXXXXX`, so
// parallel tests never share a path.
//
// Thread safety: one owner. Lifetime: move-only; the directory lives as long as the object
// unless keep() was called (useful when debugging a failure).
#pragma once

#include <string>

#include "base/result.h"

namespace shoal::testing {

class TempDir {
 public:
  static Result<TempDir> create(const std::string& label = "test");

  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }
  // `path()/name`.
  std::string join(const std::string& name) const { return path_ + "/" + name; }
  // Do not remove the directory at destruction.
  void keep() { keep_ = true; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  void removeNow();

  std::string path_;
  bool keep_ = false;
};

}  // namespace shoal::testing
