//===- StepCacheTest.cpp - The step cache's keys and entries --------------===//

#include "remat/ExecutionEngine/StepCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <thread>

using namespace remat;

namespace {

/// A fresh directory under the system's temporary directory, removed at
/// the end of the test.
class StepCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("remat-step-cache", path));
    directory = std::string(path);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(directory); }

  /// Overwrites the entry of `key` with `bytes`.
  void overwrite(const StepCache &cache, llvm::StringRef key,
                 llvm::StringRef bytes) {
    std::error_code error;
    llvm::raw_fd_ostream file(cache.getPath(key), error);
    ASSERT_FALSE(error);
    file << bytes;
  }

  std::string read(const StepCache &cache, llvm::StringRef key) {
    auto buffer = llvm::MemoryBuffer::getFile(cache.getPath(key));
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  }

  std::string directory;
};

TEST(StepCacheKey, PartsAreDelimited) {
  std::string abc = StepCacheKey().add("a", "bc").finish();
  EXPECT_EQ(abc, StepCacheKey().add("a", "bc").finish());
  EXPECT_EQ(abc.size(), 64u);
  EXPECT_NE(abc, StepCacheKey().add("ab", "c").finish());
  EXPECT_NE(abc, StepCacheKey().add("a", "b").add("", "c").finish());
  EXPECT_NE(abc, StepCacheKey().add("a", "bd").finish());
}

TEST_F(StepCacheTest, StoresAndReadsBack) {
  StepCache cache(directory + "/new/dir");
  EXPECT_FALSE(cache.lookup("k"));
  ObjectFiles objects = {"first object", std::string("\0\1\2", 3), ""};
  ASSERT_FALSE(llvm::errorToBool(cache.store("k", objects)));
  std::optional<ObjectFiles> read = cache.lookup("k");
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, objects);
  EXPECT_FALSE(cache.lookup("other"));
}

TEST_F(StepCacheTest, CorruptEntriesAreMisses) {
  StepCache cache(directory);
  ASSERT_FALSE(llvm::errorToBool(cache.store("k", {"some object bytes"})));
  std::string entry = read(cache, "k");
  ASSERT_FALSE(entry.empty());
  // Every proper prefix, one flipped bit anywhere, and other bytes.
  for (size_t size = 0; size < entry.size(); ++size) {
    overwrite(cache, "k", llvm::StringRef(entry).take_front(size));
    EXPECT_FALSE(cache.lookup("k")) << "prefix of " << size << " bytes";
  }
  for (size_t i = 0; i < entry.size(); ++i) {
    std::string flipped = entry;
    flipped[i] ^= 0x4;
    overwrite(cache, "k", flipped);
    EXPECT_FALSE(cache.lookup("k")) << "bit flipped in byte " << i;
  }
  overwrite(cache, "k", entry + "x");
  EXPECT_FALSE(cache.lookup("k"));
  overwrite(cache, "k", entry);
  EXPECT_TRUE(cache.lookup("k"));
}

TEST_F(StepCacheTest, ConcurrentStoresLeaveOneWholeEntry) {
  StepCache cache(directory);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        ObjectFiles objects(3, std::string(1000 + t, char('a' + t)));
        EXPECT_FALSE(llvm::errorToBool(cache.store("k", objects)));
        std::optional<ObjectFiles> read = cache.lookup("k");
        // Some writer's whole entry, never a mix.
        ASSERT_TRUE(read);
        ASSERT_EQ(read->size(), 3u);
        EXPECT_EQ((*read)[0], (*read)[2]);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  unsigned files = 0;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(directory, error), end;
       !error && it != end; it.increment(error))
    ++files;
  EXPECT_EQ(files, 1u);
}

TEST_F(StepCacheTest, PrunesLeastRecentlyUsed) {
  StepCache cache(directory, /*maxBytes=*/3000);
  std::string kilobyte(1000, 'x');
  ASSERT_FALSE(llvm::errorToBool(cache.store("old", {kilobyte})));
  ASSERT_FALSE(llvm::errorToBool(cache.store("mid", {kilobyte})));
  // Times on disk may be coarse: make the order plain.
  auto now = std::chrono::system_clock::now();
  auto setTime = [&](llvm::StringRef key, int secondsAgo) {
    int fd;
    ASSERT_FALSE(llvm::sys::fs::openFileForWrite(cache.getPath(key), fd,
                                                 llvm::sys::fs::CD_OpenExisting,
                                                 llvm::sys::fs::OF_Append));
    llvm::sys::fs::setLastAccessAndModificationTime(
        fd, now - std::chrono::seconds(secondsAgo));
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  };
  setTime("old", 100);
  setTime("mid", 50);
  ASSERT_FALSE(llvm::errorToBool(cache.store("new", {kilobyte})));
  EXPECT_FALSE(cache.lookup("old"));
  EXPECT_TRUE(cache.lookup("mid"));
  EXPECT_TRUE(cache.lookup("new"));
}

} // namespace
