// The dependency table of docs/architecture.md (after DESIGN.md's "Folders and
// what may depend on what") as data, for architecture_test.cpp.
//
// A module is a top-level folder (engine/layout is its own module, the bottom
// library). An edge is an `#include "folder/..."` or `#include <external>`
// line in a module's source, or a target_link_libraries() (or a test's LIBS)
// line in its CMakeLists.txt. Every edge must be allowed below.
#pragma once

#include <string>
#include <vector>

namespace bubblescope::architecture {

struct ModuleRule {
  std::string module;
  std::vector<std::string> mayUse;  // other modules and external classes
};

// External classes: mpi, sqlite, qt, cuda (runtime, cuBLAS, CUPTI, NCCL),
// blas, cli11. The standard library, nlohmann_json, POSIX headers, GoogleTest
// and Threads are allowed everywhere.
inline const std::vector<ModuleRule> kRules = {
    {"common", {}},
    {"trace_model", {"common"}},
    // Pure: no MPI, no SQLite, no Qt, no BLAS, no CUDA.
    {"layout", {"common"}},
    {"tracer", {"common", "trace_model", "mpi", "cuda"}},
    // The engine never writes SQL and never shows anything.
    {"engine", {"common", "trace_model", "layout", "tracer", "mpi", "cuda", "blas"}},
    // Storage may use the trace model and engine/layout, not the engine runtime.
    {"storage", {"common", "trace_model", "layout", "sqlite"}},
    // The CLI reaches SQLite only through storage.
    {"cli", {"common", "trace_model", "layout", "tracer", "engine", "storage", "mpi", "cli11"}},
    // The GUI never links the engine runtime or the tracer; it reads the store.
    {"gui", {"common", "trace_model", "layout", "storage", "qt"}},
    // Tests may use anything but the GUI (tests/gui may).
    {"tests",
     {"common", "trace_model", "layout", "tracer", "engine", "storage", "cli", "mpi", "sqlite",
      "qt", "cuda", "blas", "cli11"}},
};

// Edges between parts of one module that the table forbids: the parallel
// layer reaches devices through the Backend, never the CUDA back end's files.
struct PathRule {
  std::string fromPrefix, toPrefix, why;
};
inline const std::vector<PathRule> kForbiddenPaths = {
    {"engine/parallel/", "engine/cuda/", "engine/parallel uses devices through the Backend"},
};

// Known breaks, each named and commented; the test fails on any edge not
// allowed and not listed here. `from` is a module or a path prefix, `to` a
// module, external class or path prefix. Remove an entry when its break is
// fixed (the test reports entries that match nothing).
struct KnownException {
  std::string from, to, why;
};
inline const std::vector<KnownException> kKnownExceptions = {
    // The NCCL communicator includes cuda_check.h; engineer `engine` moves
    // the device calls behind the Backend (issue 14 item 1).
    {"engine/parallel/nccl_communicator.cpp", "engine/cuda/",
     "NCCL communicator calls CUDA directly (issue 14 item 1)"},
};

}  // namespace bubblescope::architecture
