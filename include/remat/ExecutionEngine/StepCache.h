//===- StepCache.h - Compiled steps on disk ----------------------*- C++
//-*-===//
//
// A directory of compiled steps keyed by everything their code depends on,
// which remat-run reads before it compiles and fills after.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_EXECUTIONENGINE_STEPCACHE_H
#define REMAT_EXECUTIONENGINE_STEPCACHE_H

#include "remat/ExecutionEngine/HostCompiler.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

#include <optional>
#include <string>

namespace remat {

/// Builds a cache key from the parts a compiled step depends on, each
/// length-prefixed so that no two lists of parts give the same bytes.
class StepCacheKey {
public:
  StepCacheKey();
  /// Adds a named part (the step's IR, a flag, the target, the version).
  StepCacheKey &add(llvm::StringRef name, llvm::StringRef value);
  /// The key: 64 hexadecimal digits of the SHA-256 of the parts.
  std::string finish();

private:
  llvm::SHA256 hasher;
};

/// Compiled steps, one file each, in a directory. An entry is written to a
/// file of its own and renamed into place, so that two processes filling
/// the same entry at once leave one whole entry and a reader never sees a
/// part of one. An entry holds its objects and a SHA-256 of them: one that
/// is short, altered or of another format is a miss, never an error.
class StepCache {
public:
  /// A cache in `directory`, created on the first store; at most
  /// `maxBytes` of entries are kept (the least recently used go first).
  explicit StepCache(std::string directory, uint64_t maxBytes = uint64_t(4)
                                                                << 30);

  /// The default directory: $REMAT_CACHE_DIR, else $XDG_CACHE_HOME/remat/steps,
  /// else ~/.cache/remat/steps.
  static std::string getDefaultDirectory();

  /// The entry of `key`, if there is a whole one.
  std::optional<ObjectFiles> lookup(llvm::StringRef key) const;
  /// Stores `objects` under `key`; returns an error message if the entry
  /// could not be written (the cache is then left as it was).
  llvm::Error store(llvm::StringRef key, const ObjectFiles &objects) const;

  /// The path of `key`'s entry.
  std::string getPath(llvm::StringRef key) const;

private:
  /// Removes the least recently used entries beyond maxBytes.
  void prune() const;

  std::string directory;
  uint64_t maxBytes;
};

} // namespace remat

#endif // REMAT_EXECUTIONENGINE_STEPCACHE_H
