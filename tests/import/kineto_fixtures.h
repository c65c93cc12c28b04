// The shared Kineto fixtures (../shared/fixtures/kineto, docs/import.md):
// paths, and a skip when they are absent.
#pragma once

#include <filesystem>
#include <string>

#include "fixture_paths.h"  // generated: BUBBLESCOPE_KINETO_FIXTURES

namespace bubblescope::testing {

inline std::string kinetoFixture(const std::string& relative) {
  return std::string(BUBBLESCOPE_KINETO_FIXTURES) + "/" + relative;
}

inline bool haveKinetoFixtures() {
  return std::filesystem::exists(kinetoFixture("nccl_parser_config/nccl_data.json.gz"));
}

}  // namespace bubblescope::testing

#define BS_REQUIRE_KINETO_FIXTURES()                                               \
  do {                                                                             \
    if (!::bubblescope::testing::haveKinetoFixtures()) {                           \
      GTEST_SKIP() << "Kineto fixtures not found at " BUBBLESCOPE_KINETO_FIXTURES; \
    }                                                                              \
  } while (0)
