// Sizes from the user are checked against the memory available before
// anything is allocated (engine/available_memory.h, Allocator::allocate).
#include "engine/available_memory.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "engine/allocator.h"

namespace bubblescope::engine {
namespace {

TEST(AvailableMemoryTest, ASizeBeyondEveryMachineNamesWhatAndHowManyBytes) {
  ASSERT_GT(availableMemoryBytes(), 0);  // Linux: /proc/meminfo
  const Status s = checkFitsInMemory("activations", 1e30);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message().rfind("activations needs ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("(1000000000000000019884624838656 bytes), more than the "),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(checkFitsInMemory("one byte", 1).isOk());
}

TEST(AvailableMemoryTest, FilesMustBeRegularAndFit) {
  EXPECT_EQ(checkFileFitsInMemory("checkpoint '/dev/zero'", "/dev/zero").message(),
            "checkpoint '/dev/zero' is not a regular file");
  EXPECT_EQ(checkFileFitsInMemory("data file 'x'", "/no/such/file").message(),
            "data file 'x' does not exist");
  EXPECT_FALSE(checkFileFitsInMemory("a folder", "/tmp").isOk());
}

// The allocator refuses, before trying, a host buffer beyond the memory
// available, with the category in the message.
TEST(AvailableMemoryTest, TheAllocatorRefusesABufferBeyondMemoryByCategory) {
  Allocator allocator;
  const auto available = static_cast<size_t>(availableMemoryBytes());
  try {
    void* p = allocator.allocate(available + (size_t{1} << 30), MemoryCategory::kActivations);
    allocator.release(p, available + (size_t{1} << 30), MemoryCategory::kActivations);
    FAIL() << "allocated more than the memory available";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(std::string(e.what()).rfind("activations: a buffer needs ", 0), 0u) << e.what();
  }
  EXPECT_EQ(allocator.currentBytes(MemoryCategory::kActivations), 0);
}

}  // namespace
}  // namespace bubblescope::engine
