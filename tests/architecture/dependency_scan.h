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
// kKnownExceptions that excused at least one edge.
std::vector<std::string> forbiddenEdges(const std::vector<Edge>& edges,
                                        std::set<size_t>* usedExceptions = nullptr);

}  // namespace bubblescope::architecture
