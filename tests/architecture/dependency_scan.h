// DependencyScan: reads the #include lines of every source file and the link
// lines of every CMakeLists.txt of a source tree, and checks each edge
// against the rules of dependency_rules.h.
//
// Contract: pure reading; paths are relative to the tree's root with '/'.
// Build folders (build*), hidden folders and files outside the modules'
// folders are not read.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/architecture/dependency_rules.h"

namespace bubblescope::architecture {

struct Edge {
  std::string file;    // where the edge is written, e.g. "gui/span_palette.h"
  int line = 0;        // 1-based
  std::string from;    // module of the file
  std::string to;      // module or external class
  std::string target;  // the included path or the linked library
};

// "engine/layout/x.h" -> "layout", "gui/a.cpp" -> "gui"; "" outside the modules.
std::string moduleOfPath(const std::string& path);
// <mpi.h> -> "mpi", <QWidget> -> "qt", ...; "" for headers allowed everywhere.
std::string externalOfHeader(const std::string& header);
// SQLite::SQLite3 -> "sqlite", ...; "" for libraries allowed everywhere.
std::string externalOfLibrary(const std::string& library);

std::vector<Edge> scanTree(const std::filesystem::path& root);

// An edge the rules forbid, with the reason, as one line for the test's output.
std::string describe(const Edge& edge, const std::string& why);

// The forbidden edges (described). `usedExceptions` receives the indexes of
// `exceptions` that excused at least one edge.
std::vector<std::string> forbiddenEdges(
    const std::vector<Edge>& edges, std::set<size_t>* usedExceptions = nullptr,
    const std::vector<KnownException>& exceptions = kKnownExceptions);

// The library folder of a path, the most specific one ("engine/parallel/x.h"
// -> "engine/parallel"); "" outside every library.
std::string libraryOfPath(const std::string& path,
                          const std::vector<Library>& libraries = kLibraries);

// Includes of a header that its library does not declare public, from a file
// of another folder (described). A file under tests/<folder>/ may include the
// private headers of the libraries its mirror names.
std::vector<std::string> privateHeaderIncludes(
    const std::vector<Edge>& edges, const std::vector<Library>& libraries = kLibraries,
    const std::vector<TestMirror>& mirrors = kTestMirrors);

// The declarations against the tree at `root` (described): a public header
// that does not exist, a folder under tests/ that no mirror names, a mirror
// that names no folder of tests/ or an unknown library.
std::vector<std::string> declarationProblems(const std::filesystem::path& root,
                                             const std::vector<Library>& libraries = kLibraries,
                                             const std::vector<TestMirror>& mirrors = kTestMirrors);

}  // namespace bubblescope::architecture
