//===- StepCache.cpp - Compiled steps on disk -----------------------------===//
//
// This file implements the step cache: content-addressed entries of host
// objects, written atomically and checked when read.
//
// An entry is "REMATSTEP1\n", the number of objects (8 bytes, little
// endian), each object's size (8 bytes) and bytes, then the SHA-256 of all
// that precedes it.
//
//===----------------------------------------------------------------------===//

#include "remat/ExecutionEngine/StepCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>

using namespace remat;

static constexpr llvm::StringLiteral kMagic = "REMATSTEP1\n";
static constexpr size_t kDigestSize = 32;

StepCacheKey::StepCacheKey() { add("format", kMagic); }

StepCacheKey &StepCacheKey::add(llvm::StringRef name, llvm::StringRef value) {
  for (llvm::StringRef part : {name, value}) {
    uint8_t size[8];
    llvm::support::endian::write64le(size, part.size());
    hasher.update(llvm::ArrayRef<uint8_t>(size));
    hasher.update(part);
  }
  return *this;
}

std::string StepCacheKey::finish() {
  std::array<uint8_t, 32> digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

StepCache::StepCache(std::string directory, uint64_t maxBytes)
    : directory(std::move(directory)), maxBytes(maxBytes) {}

std::string StepCache::getDefaultDirectory() {
  if (const char *dir = std::getenv("REMAT_CACHE_DIR"); dir && *dir)
    return dir;
  llvm::SmallString<128> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    path = xdg;
  else if (llvm::sys::path::home_directory(path))
    llvm::sys::path::append(path, ".cache");
  else
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/false, path);
  llvm::sys::path::append(path, "remat", "steps");
  return std::string(path);
}

std::string StepCache::getPath(llvm::StringRef key) const {
  llvm::SmallString<128> path(directory);
  llvm::sys::path::append(path, key + ".step");
  return std::string(path);
}

std::optional<ObjectFiles> StepCache::lookup(llvm::StringRef key) const {
  std::string path = getPath(key);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  llvm::StringRef data = (*buffer)->getBuffer();
  if (data.size() < kMagic.size() + 8 + kDigestSize ||
      !data.starts_with(kMagic))
    return std::nullopt;
  llvm::StringRef body = data.drop_back(kDigestSize);
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(body.bytes_begin(), body.bytes_end()));
  if (data.take_back(kDigestSize) !=
      llvm::StringRef(reinterpret_cast<const char *>(digest.data()),
                      kDigestSize))
    return std::nullopt;

  llvm::StringRef rest = body.drop_front(kMagic.size());
  auto read64 = [&](uint64_t &value) {
    if (rest.size() < 8)
      return false;
    value = llvm::support::endian::read64le(rest.data());
    rest = rest.drop_front(8);
    return true;
  };
  uint64_t count;
  if (!read64(count) || count > rest.size() / 8)
    return std::nullopt;
  ObjectFiles objects;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t size;
    if (!read64(size) || size > rest.size())
      return std::nullopt;
    objects.push_back(rest.take_front(size).str());
    rest = rest.drop_front(size);
  }
  if (!rest.empty())
    return std::nullopt;
  // The entry was used: pruning keeps the recently used ones.
  int fd;
  if (!llvm::sys::fs::openFileForWrite(path, fd, llvm::sys::fs::CD_OpenExisting,
                                       llvm::sys::fs::OF_Append)) {
    llvm::sys::fs::setLastAccessAndModificationTime(
        fd, std::chrono::system_clock::now());
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  return objects;
}

llvm::Error StepCache::store(llvm::StringRef key,
                             const ObjectFiles &objects) const {
  if (std::error_code error = llvm::sys::fs::create_directories(directory))
    return llvm::createStringError(error, "cannot create the step cache '" +
                                              directory +
                                              "': " + error.message());
  std::string entry;
  llvm::raw_string_ostream stream(entry);
  auto write64 = [&](uint64_t value) {
    char bytes[8];
    llvm::support::endian::write64le(bytes, value);
    stream.write(bytes, 8);
  };
  stream << kMagic;
  write64(objects.size());
  for (const std::string &object : objects) {
    write64(object.size());
    stream << object;
  }
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(entry.data()), entry.size()));
  stream.write(reinterpret_cast<const char *>(digest.data()), digest.size());

  // A file of this process's own, renamed over the entry: readers see the
  // old entry, no entry, or the whole new one.
  std::string path = getPath(key);
  llvm::SmallString<128> temporary;
  int fd;
  if (std::error_code error = llvm::sys::fs::createUniqueFile(
          path + ".tmp-%%%%%%%%", fd, temporary))
    return llvm::createStringError(error, "cannot write the step cache: " +
                                              error.message());
  {
    llvm::raw_fd_ostream file(fd, /*shouldClose=*/true);
    file << entry;
    file.close();
    if (file.has_error()) {
      std::error_code error = file.error();
      file.clear_error();
      llvm::sys::fs::remove(temporary);
      return llvm::createStringError(error, "cannot write the step cache: " +
                                                error.message());
    }
  }
  if (std::error_code error = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return llvm::createStringError(error, "cannot write the step cache: " +
                                              error.message());
  }
  prune();
  return llvm::Error::success();
}

void StepCache::prune() const {
  struct Entry {
    std::string path;
    uint64_t size;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(directory, error), end;
       !error && it != end; it.increment(error)) {
    if (llvm::sys::path::extension(it->path()) != ".step")
      continue;
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(it->path(), status))
      continue;
    entries.push_back(
        {it->path(), status.getSize(), status.getLastModificationTime()});
    total += status.getSize();
  }
  if (total <= maxBytes)
    return;
  llvm::sort(entries,
             [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &entry : entries) {
    if (total <= maxBytes)
      break;
    if (!llvm::sys::fs::remove(entry.path))
      total -= entry.size;
  }
}
