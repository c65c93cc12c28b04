// SpaceReserve: the held-back bytes are a real file until released, moving
// hands the file over, and a disk that cannot hold them leaves nothing.
#include "storage/space_reserve.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace bubblescope::storage {
namespace {

namespace fs = std::filesystem;

std::string tempPath(const char* name) {
  return (fs::temp_directory_path() / (std::string(name) + "-" + std::to_string(getpid())))
      .string();
}

TEST(SpaceReserve, HoldsItsBytesUntilReleased) {
  const std::string path = tempPath("bs-reserve");
  {
    SpaceReserve r = SpaceReserve::make(path, 100 * 1024 + 7);
    ASSERT_TRUE(r.held());
    EXPECT_EQ(fs::file_size(path), 100u * 1024 + 7);
    SpaceReserve moved = std::move(r);
    EXPECT_FALSE(r.held());
    EXPECT_TRUE(moved.held());
    EXPECT_TRUE(fs::exists(path));
    moved.release();
    EXPECT_FALSE(fs::exists(path));
    moved.release();  // idempotent
  }
  {
    SpaceReserve scoped = SpaceReserve::make(path, 10);
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path)) << "the destructor releases";
}

TEST(SpaceReserve, WhereNothingCanBeWrittenNothingIsHeld) {
  SpaceReserve r = SpaceReserve::make("/nonexistent-dir/t.db.reserve", 1024);
  EXPECT_FALSE(r.held());
  EXPECT_FALSE(fs::exists("/nonexistent-dir/t.db.reserve"));
  // A disk too full for the reserve: cli.run_disk_full_stops_the_job_and_keeps_committed_steps
  // (a 1 MiB tmpfs, needs root).
}

}  // namespace
}  // namespace bubblescope::storage
