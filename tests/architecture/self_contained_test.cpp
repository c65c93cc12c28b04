// The repository stands alone: no file of the project cites the reading
// material that sits beside a checkout (the shared folder's design and
// reference pages), since a clone does not have it. The design lives in
// docs/design.md and the formulas in docs/formulas.md. Only the tests that
// read the shared real-trace fixtures may name that folder, and they skip,
// saying why, when it is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace bubblescope::architecture {
namespace {

namespace fs = std::filesystem;

// Spelled in pieces so that this file does not cite them itself.
const std::vector<std::string>& citations() {
  static const std::vector<std::string> kCitations = {
      std::string("../") + "shared",
      std::string("shared/") + "fixtures",
      std::string("DESIGN") + ".md",
      std::string("REFERENCE") + ".md",
  };
  return kCitations;
}

// The fixture-reading tests (and the script one of them runs), relative to
// the source root.
const std::vector<std::string>& fixtureReaders() {
  static const std::vector<std::string> kReaders = {
      "tests/CMakeLists.txt",                // finds the fixtures folder for the tests
      "tests/import/kineto_fixtures.h",      // opens the fixtures
      "tests/import/kineto_import_test.cpp",
      "tests/gui/kineto_import_test.cpp",
      "tests/import/nsys_fixture_test.cpp",  // the real Nsight Systems export
      "tests/import/CMakeLists.txt",         // its command-line test skips without it
      "scripts/hta_crosscheck.py",  // run by import.hta_crosscheck on the fixtures
  };
  return kReaders;
}

bool skippedFolder(const fs::path& p) {
  const std::string name = p.filename().string();
  return name == ".git" || name == "build" || name.rfind("build-", 0) == 0 ||
         (name.size() > 1 && name[0] == '.' && name != ".ci");
}

// Every "file:line: text" of a text file under `root` (build folders and
// hidden folders but .ci left out) that cites the shared folder, except the
// fixture readers.
std::vector<std::string> outsideCitations(const fs::path& root) {
  std::vector<std::string> found;
  auto it = fs::recursive_directory_iterator(root);
  for (; it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && skippedFolder(it->path())) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || it->file_size() > (4u << 20)) continue;
    const std::string rel = fs::relative(it->path(), root).generic_string();
    const auto& readers = fixtureReaders();
    if (std::find(readers.begin(), readers.end(), rel) != readers.end()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    if (s.find('\0') != std::string::npos) continue;  // not text
    std::istringstream lines(s);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
      for (const std::string& c : citations()) {
        if (line.find(c) != std::string::npos) {
          found.push_back(rel + ":" + std::to_string(n) + ": " + line);
          break;
        }
      }
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "  " + l + "\n";
  return out;
}

TEST(SelfContainedTest, NoFileButTheFixtureReadersCitesTheSharedFolder) {
  const std::vector<std::string> found = outsideCitations(BUBBLESCOPE_SOURCE_DIR);
  EXPECT_TRUE(found.empty()) << "cite docs/design.md or docs/formulas.md instead:\n"
                             << joined(found);
}

TEST(SelfContainedTest, ACitationInAnyFileIsFoundAndTheReadersAreExcused) {
  const fs::path root = fs::temp_directory_path() /
                        ("bs_self_contained_" +
                         std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(root);
  auto write = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  write("engine/a.h", "// fine\n// the bubble (" + citations()[2] + ", metrics)\n");
  write("docs/b.md", "See `" + citations()[0] + "/x`.\n");
  write("tests/import/kineto_fixtures.h", "// " + citations()[1] + "/kineto\n");
  write("build/c.h", "// " + citations()[3] + "\n");  // a build folder is not the project
  const std::vector<std::string> found = outsideCitations(root);
  fs::remove_all(root);
  ASSERT_EQ(found.size(), 2u) << joined(found);
  EXPECT_EQ(found[0].rfind("docs/b.md:1: ", 0), 0u) << found[0];
  EXPECT_EQ(found[1].rfind("engine/a.h:2: ", 0), 0u) << found[1];
}

}  // namespace
}  // namespace bubblescope::architecture
