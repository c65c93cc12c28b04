// The dependency table of docs/architecture.md, enforced over the source tree
// (issue 14 item 6): every #include and every link line of a module must be
// an edge the table allows, or a named known exception (dependency_rules.h);
// a file includes another library's header only when that library declares
// it public; every folder of tests/ mirrors the source folders it tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "tests/architecture/dependency_scan.h"

namespace bubblescope::architecture {
namespace {

namespace fs = std::filesystem;

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "  " + l + "\n";
  return out;
}

bool hasEdge(const std::vector<Edge>& edges, const std::string& from, const std::string& to,
             const std::string& target) {
  return std::any_of(edges.begin(), edges.end(), [&](const Edge& e) {
    return e.from == from && e.to == to && e.target == target;
  });
}

// A scratch source tree with the given files.
class ScratchTree {
 public:
  explicit ScratchTree(const std::string& name)
      : root_(fs::temp_directory_path() /
              ("bs_architecture_" + name + "_" +
               std::to_string(::testing::UnitTest::GetInstance()->random_seed()))) {
    fs::remove_all(root_);
  }
  ~ScratchTree() { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

TEST(ArchitectureTest, TheTreeHasNoForbiddenEdge) {
  const std::vector<Edge> edges = scanTree(BUBBLESCOPE_SOURCE_DIR);
  const std::vector<std::string> bad = forbiddenEdges(edges);
  EXPECT_TRUE(bad.empty()) << bad.size() << " forbidden edges:\n" << joined(bad);
}

TEST(ArchitectureTest, ReadsTheIncludesAndLinksOfTheTree) {
  // Edges the tree is known to have: if the scanner read nothing, the test
  // above would pass for nothing.
  const std::vector<Edge> edges = scanTree(BUBBLESCOPE_SOURCE_DIR);
  EXPECT_TRUE(hasEdge(edges, "engine", "layout", "engine/layout/layout.h"));
  EXPECT_TRUE(hasEdge(edges, "storage", "sqlite", "sqlite3.h"));
  EXPECT_TRUE(hasEdge(edges, "storage", "layout", "engine_layout"));  // analysis's link line
  EXPECT_TRUE(hasEdge(edges, "gui", "qt", "Qt6::Widgets"));
  EXPECT_TRUE(hasEdge(edges, "engine", "mpi", "mpi.h"));
  EXPECT_GT(edges.size(), 500u);
}

TEST(ArchitectureTest, AForbiddenIncludeIsFound) {
  ScratchTree tree("include");
  tree.write("storage/reader.cpp",
             "#include \"storage/reader.h\"\n\n#include \"gui/main_window.h\"\n");
  tree.write("engine/layout/layout.cpp", "#include <vector>\n  #  include <mpi.h>\n");
  tree.write("cli/bench.cpp", "#include <sqlite3.h>\n#include \"storage/trace_reader.h\"\n");
  tree.write("gui/view.cpp", "#include <QWidget>\n#include \"engine/gpt_model.h\"\n");
  tree.write("engine/trainer.cpp", "#include \"engine/layout/layout.h\"\n#include <cblas.h>\n");
  const std::vector<std::string> bad = forbiddenEdges(scanTree(tree.root()));
  ASSERT_EQ(bad.size(), 4u) << joined(bad);
  EXPECT_EQ(bad[0],
            "cli/bench.cpp:1: cli -> sqlite (sqlite3.h): cli may not use sqlite "
            "(docs/architecture.md)");
  EXPECT_EQ(bad[1],
            "engine/layout/layout.cpp:2: layout -> mpi (mpi.h): layout may not use mpi "
            "(docs/architecture.md)");
  EXPECT_EQ(bad[2],
            "gui/view.cpp:2: gui -> engine (engine/gpt_model.h): gui may not use engine "
            "(docs/architecture.md)");
  EXPECT_EQ(bad[3],
            "storage/reader.cpp:3: storage -> gui (gui/main_window.h): storage may not use gui "
            "(docs/architecture.md)");
}

TEST(ArchitectureTest, AForbiddenLinkIsFound) {
  ScratchTree tree("link");
  tree.write("engine/parallel/CMakeLists.txt", "add_library(engine_parallel a.cpp)\n");
  tree.write("gui/CMakeLists.txt",
             "# the app\nadd_library(bubblescope_gui STATIC\n  a.cpp)\n"
             "target_link_libraries(bubblescope_gui PUBLIC storage\n"
             "  engine_parallel # not allowed\n  Qt6::Widgets)\n");
  tree.write("storage/CMakeLists.txt",
             "add_library(storage a.cpp)\ntarget_link_libraries(storage PRIVATE SQLite::SQLite3 "
             "MPI::MPI_CXX)\n");
  tree.write("tests/analysis/CMakeLists.txt",
             "bs_add_test(analysis_test SOURCES a.cpp LIBS storage bubblescope_gui LABELS x)\n");
  tree.write("tests/gui/CMakeLists.txt",
             "bs_add_test(gui_test SOURCES a.cpp LIBS bubblescope_gui)\n");
  const std::vector<std::string> bad = forbiddenEdges(scanTree(tree.root()));
  ASSERT_EQ(bad.size(), 3u) << joined(bad);
  EXPECT_EQ(bad[0],
            "gui/CMakeLists.txt:4: gui -> engine (engine_parallel): gui may not use engine "
            "(docs/architecture.md)");
  EXPECT_EQ(bad[1],
            "storage/CMakeLists.txt:2: storage -> mpi (MPI::MPI_CXX): storage may not use mpi "
            "(docs/architecture.md)");
  EXPECT_EQ(bad[2],
            "tests/analysis/CMakeLists.txt:1: tests -> gui (bubblescope_gui): tests may not use "
            "gui (docs/architecture.md)");
}

// A synthetic exception: the tree's list is empty today, but the mechanism
// must still excuse exactly the edge it names and nothing else.
TEST(ArchitectureTest, AKnownExceptionExcusesOnlyItsOwnEdge) {
  ScratchTree tree("exception");
  tree.write("engine/parallel/old_device_comm.cpp", "#include \"engine/cuda/cuda_check.h\"\n");
  tree.write("engine/parallel/data_parallel.cpp", "#include \"engine/cuda/cuda_check.h\"\n");
  const std::vector<KnownException> exceptions = {
      {"engine/parallel/old_device_comm.cpp", "engine/cuda/", "a synthetic break"},
      {"gui/", "engine/", "matches nothing"}};
  std::set<size_t> used;
  const std::vector<std::string> bad = forbiddenEdges(scanTree(tree.root()), &used, exceptions);
  ASSERT_EQ(bad.size(), 1u) << joined(bad);
  EXPECT_EQ(bad[0],
            "engine/parallel/data_parallel.cpp:1: engine -> engine (engine/cuda/cuda_check.h): "
            "engine/parallel uses devices through the Backend");
  EXPECT_EQ(used, (std::set<size_t>{0}));
  // Without the exception both edges are forbidden.
  EXPECT_EQ(forbiddenEdges(scanTree(tree.root()), nullptr, {}).size(), 2u);
}

TEST(ArchitectureTest, EveryKnownExceptionStillMatchesAnEdge) {
  std::set<size_t> used;
  (void)forbiddenEdges(scanTree(BUBBLESCOPE_SOURCE_DIR), &used);
  for (size_t i = 0; i < kKnownExceptions.size(); ++i) {
    EXPECT_TRUE(used.count(i)) << "known exception " << kKnownExceptions[i].from << " -> "
                               << kKnownExceptions[i].to
                               << " matches nothing any more; remove it from "
                                  "tests/architecture/dependency_rules.h";
  }
}

// Each library exposes only its declared public headers to other folders.
TEST(ArchitectureTest, NoFolderIncludesAnotherLibrarysPrivateHeader) {
  const std::vector<std::string> bad = privateHeaderIncludes(scanTree(BUBBLESCOPE_SOURCE_DIR));
  EXPECT_TRUE(bad.empty()) << bad.size() << " includes of private headers:\n" << joined(bad);
}

TEST(ArchitectureTest, ThePublicHeadersAndTestMirrorsMatchTheTree) {
  const std::vector<std::string> bad = declarationProblems(BUBBLESCOPE_SOURCE_DIR);
  EXPECT_TRUE(bad.empty()) << joined(bad);
  EXPECT_EQ(libraryOfPath("engine/parallel/rank_trainer.h"), "engine/parallel");
  EXPECT_EQ(libraryOfPath("engine/gpt_model.h"), "engine");
  EXPECT_EQ(libraryOfPath("storage/analysis/bubbles.h"), "storage/analysis");
  EXPECT_EQ(libraryOfPath("tests/layout/layout_test.cpp"), "");
}

TEST(ArchitectureTest, APrivateHeaderIncludedFromAnotherFolderIsFound) {
  ScratchTree tree("private");
  tree.write("gui/view.cpp",
             "#include \"gui/view.h\"\n#include \"storage/trace_reader.h\"\n"
             "#include \"storage/schema.h\"\n");
  tree.write("storage/analysis/metrics.cpp", "#include \"storage/event_block.h\"\n");
  tree.write("storage/trace_reader.cpp", "#include \"storage/schema.h\"\n");  // its own
  tree.write("engine/parallel/x.cpp",
             "#include \"engine/gpt_model.h\"\n#include \"engine/cpu_kernels.h\"\n");
  tree.write("tests/storage/schema_test.cpp", "#include \"storage/schema.h\"\n");  // mirror
  tree.write("tests/gui/view_test.cpp", "#include \"storage/schema.h\"\n");
  const std::vector<std::string> bad = privateHeaderIncludes(scanTree(tree.root()));
  ASSERT_EQ(bad.size(), 4u) << joined(bad);
  const std::string where =
      " (its public headers: kLibraries in "
      "tests/architecture/dependency_rules.h)";
  EXPECT_EQ(bad[0],
            "engine/parallel/x.cpp:2: includes engine/cpu_kernels.h, a private header "
            "of engine" +
                where);
  EXPECT_EQ(bad[1],
            "gui/view.cpp:3: includes storage/schema.h, a private header of storage" + where);
  EXPECT_EQ(bad[2],
            "storage/analysis/metrics.cpp:1: includes storage/event_block.h, a private "
            "header of storage" +
                where);
  EXPECT_EQ(bad[3],
            "tests/gui/view_test.cpp:1: includes storage/schema.h, a private header "
            "of storage" +
                where);
}

}  // namespace
}  // namespace bubblescope::architecture
