#include "tests/architecture/dependency_scan.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace bubblescope::architecture {
namespace fs = std::filesystem;
namespace {

bool startsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool isSource(const fs::path& p) {
  static const std::set<std::string> kExtensions = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh"};
  return kExtensions.count(p.extension().string()) > 0;
}

// Every file of the modules' folders, relative to root, in a stable order.
std::vector<std::string> treeFiles(const fs::path& root) {
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.front() == '.' || startsWith(name, "build"))) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    const std::string rel = fs::relative(it->path(), root).generic_string();
    if (!moduleOfPath(rel).empty()) files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  return files;
}

void scanIncludes(const fs::path& root, const std::string& rel, std::vector<Edge>& edges) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::ifstream in(root / rel);
  std::string line;
  const std::string from = moduleOfPath(rel);
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (!std::regex_search(line, m, kInclude)) continue;
    const std::string header = m[2];
    const std::string to = m[1] == "<" ? externalOfHeader(header) : moduleOfPath(header);
    if (!to.empty()) edges.push_back({rel, n, from, to, header});
  }
}

// One CMake command: name, arguments (comments removed), line of its name.
struct Command {
  std::string name;
  std::vector<std::string> args;
  int line = 0;
};

std::vector<Command> cmakeCommands(const std::string& text) {
  std::string code;  // comments blanked out, newlines kept
  bool comment = false;
  for (char c : text) {
    if (c == '#') comment = true;
    if (c == '\n') comment = false;
    code += comment ? ' ' : c;
  }
  std::vector<Command> commands;
  static const std::regex kCommand(R"(([A-Za-z_][A-Za-z0-9_]*)\s*\()");
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kCommand);
       it != std::sregex_iterator(); ++it) {
    const size_t open = static_cast<size_t>(it->position(0) + it->length(0));
    const size_t close = code.find(')', open);
    if (close == std::string::npos) break;
    Command c{(*it)[1],
              {},
              1 + static_cast<int>(std::count(code.begin(), code.begin() + it->position(0), '\n'))};
    std::stringstream args(code.substr(open, close - open));
    for (std::string a; args >> a;) c.args.push_back(a);
    commands.push_back(std::move(c));
  }
  return commands;
}

bool isTargetDefinition(const std::string& command) {
  return command == "add_library" || command == "add_executable" || command == "bs_add_test" ||
         command == "bs_add_mpi_test";
}

void scanLinks(const fs::path& root, const std::vector<std::string>& cmakeFiles,
               std::vector<Edge>& edges) {
  std::map<std::string, std::string> targetModule;
  std::map<std::string, std::vector<Command>> commands;
  for (const std::string& rel : cmakeFiles) {
    commands[rel] = cmakeCommands(readFile(root / rel));
    for (const Command& c : commands[rel]) {
      if (isTargetDefinition(c.name) && !c.args.empty()) {
        targetModule[c.args[0]] = moduleOfPath(rel);
      }
    }
  }
  static const std::set<std::string> kKeywords = {"PUBLIC", "PRIVATE", "INTERFACE", "SOURCES",
                                                  "LIBS",   "LABELS",  "NP"};
  for (const std::string& rel : cmakeFiles) {
    const std::string from = moduleOfPath(rel);
    for (const Command& c : commands[rel]) {
      std::vector<std::string> libraries;
      if (c.name == "target_link_libraries") {
        libraries.assign(c.args.begin() + std::min<size_t>(1, c.args.size()), c.args.end());
      } else if (isTargetDefinition(c.name)) {  // a test's LIBS list
        auto libs = std::find(c.args.begin(), c.args.end(), "LIBS");
        for (auto a = libs == c.args.end() ? libs : libs + 1;
             a != c.args.end() && !kKeywords.count(*a); ++a) {
          libraries.push_back(*a);
        }
      }
      for (const std::string& lib : libraries) {
        if (kKeywords.count(lib)) continue;
        auto known = targetModule.find(lib);
        const std::string to = known != targetModule.end() ? known->second : externalOfLibrary(lib);
        if (!to.empty()) edges.push_back({rel, c.line, from, to, lib});
      }
    }
  }
}

const ModuleRule* ruleOf(const std::string& module) {
  for (const ModuleRule& r : kRules) {
    if (r.module == module) return &r;
  }
  return nullptr;
}

bool matches(const std::string& pattern, const std::string& module, const std::string& path) {
  return pattern == module || (pattern.find('/') != std::string::npos && startsWith(path, pattern));
}

}  // namespace

std::string moduleOfPath(const std::string& path) {
  if (startsWith(path, "engine/layout/")) return "layout";
  const size_t slash = path.find('/');
  if (slash == std::string::npos) return "";
  const std::string top = path.substr(0, slash);
  static const std::set<std::string> kModules = {"common", "trace_model", "tracer", "storage",
                                                 "planning", "engine",    "cli",    "gui",
                                                 "tests"};
  return kModules.count(top) ? top : "";
}

std::string externalOfHeader(const std::string& h) {
  if (h == "mpi.h" || startsWith(h, "mpi_") || startsWith(h, "openmpi/")) return "mpi";
  if (h == "sqlite3.h") return "sqlite";
  if (h == "qcustomplot.h" || startsWith(h, "Qt") ||
      (h.size() > 1 && h[0] == 'Q' && std::isupper(static_cast<unsigned char>(h[1])))) {
    return "qt";
  }
  for (const char* p : {"cuda", "cublas", "cupti", "nccl", "curand", "nvml", "cub/", "thrust/"}) {
    if (startsWith(h, p)) return "cuda";
  }
  if (h == "cblas.h" || startsWith(h, "openblas")) return "blas";
  if (startsWith(h, "CLI/")) return "cli11";
  return "";
}

std::string externalOfLibrary(const std::string& lib) {
  if (startsWith(lib, "SQLite::") || lib == "sqlite3") return "sqlite";
  if (startsWith(lib, "MPI::")) return "mpi";
  if (startsWith(lib, "Qt6::") || startsWith(lib, "Qt5::") || startsWith(lib, "QCustomPlot")) {
    return "qt";
  }
  if (startsWith(lib, "CUDA::") || startsWith(lib, "nccl") || startsWith(lib, "NCCL")) {
    return "cuda";
  }
  if (startsWith(lib, "BLAS::") || startsWith(lib, "OpenBLAS")) return "blas";
  if (startsWith(lib, "CLI11::")) return "cli11";
  return "";
}

std::vector<Edge> scanTree(const fs::path& root) {
  std::vector<Edge> edges;
  std::vector<std::string> cmakeFiles;
  for (const std::string& rel : treeFiles(root)) {
    if (fs::path(rel).filename() == "CMakeLists.txt") cmakeFiles.push_back(rel);
    if (isSource(rel)) scanIncludes(root, rel, edges);
  }
  scanLinks(root, cmakeFiles, edges);
  return edges;
}

std::string describe(const Edge& e, const std::string& why) {
  return e.file + ":" + std::to_string(e.line) + ": " + e.from + " -> " + e.to + " (" + e.target +
         "): " + why;
}

std::vector<std::string> forbiddenEdges(const std::vector<Edge>& edges,
                                        std::set<size_t>* usedExceptions,
                                        const std::vector<KnownException>& exceptions) {
  std::vector<std::string> out;
  for (const Edge& e : edges) {
    std::string why;
    for (const PathRule& r : kForbiddenPaths) {
      if (startsWith(e.file, r.fromPrefix) && startsWith(e.target, r.toPrefix)) why = r.why;
    }
    if (why.empty() && e.to != e.from) {
      const ModuleRule* rule = ruleOf(e.from);
      const bool allowed =
          (rule && std::count(rule->mayUse.begin(), rule->mayUse.end(), e.to) > 0) ||
          (e.to == "gui" && startsWith(e.file, "tests/gui/"));
      if (!allowed) why = e.from + " may not use " + e.to + " (docs/architecture.md)";
    }
    if (why.empty()) continue;
    bool excused = false;
    for (size_t i = 0; i < exceptions.size(); ++i) {
      const KnownException& k = exceptions[i];
      if (matches(k.from, e.from, e.file) && matches(k.to, e.to, e.target)) {
        excused = true;
        if (usedExceptions) usedExceptions->insert(i);
      }
    }
    if (!excused) out.push_back(describe(e, why));
  }
  return out;
}

std::string libraryOfPath(const std::string& path, const std::vector<Library>& libraries) {
  std::string best;
  for (const Library& l : libraries) {
    if (startsWith(path, l.folder + "/") && l.folder.size() > best.size()) best = l.folder;
  }
  return best;
}

std::vector<std::string> privateHeaderIncludes(const std::vector<Edge>& edges,
                                               const std::vector<Library>& libraries,
                                               const std::vector<TestMirror>& mirrors) {
  std::vector<std::string> out;
  for (const Edge& e : edges) {
    if (fs::path(e.file).filename() == "CMakeLists.txt") continue;  // link lines
    const std::string lib = libraryOfPath(e.target, libraries);
    // Not a library's header, or one of the file's own library.
    if (lib.empty() || libraryOfPath(e.file, libraries) == lib) continue;
    const auto owner = std::find_if(libraries.begin(), libraries.end(),
                                    [&](const Library& l) { return l.folder == lib; });
    const std::string name = e.target.substr(lib.size() + 1);
    if (std::count(owner->publicHeaders.begin(), owner->publicHeaders.end(), name) > 0) continue;
    bool mirrored = false;
    for (const TestMirror& m : mirrors) {
      if (startsWith(e.file, "tests/" + m.testFolder + "/")) {
        mirrored = std::count(m.libraries.begin(), m.libraries.end(), lib) > 0;
      }
    }
    if (mirrored) continue;
    out.push_back(e.file + ":" + std::to_string(e.line) + ": includes " + e.target +
                  ", a private header of " + lib +
                  " (its public headers: kLibraries in tests/architecture/dependency_rules.h)");
  }
  return out;
}

std::vector<std::string> declarationProblems(const fs::path& root,
                                             const std::vector<Library>& libraries,
                                             const std::vector<TestMirror>& mirrors) {
  std::vector<std::string> out;
  for (const Library& l : libraries) {
    for (const std::string& h : l.publicHeaders) {
      if (!fs::exists(root / l.folder / h)) {
        out.push_back("public header " + l.folder + "/" + h + " does not exist");
      }
    }
  }
  std::set<std::string> named;
  for (const TestMirror& m : mirrors) {
    named.insert(m.testFolder);
    if (!fs::is_directory(root / "tests" / m.testFolder)) {
      out.push_back("tests/" + m.testFolder + " is named as a test mirror but does not exist");
    }
    for (const std::string& lib : m.libraries) {
      const bool known = std::any_of(libraries.begin(), libraries.end(),
                                     [&](const Library& l) { return l.folder == lib; });
      if (!known) out.push_back("tests/" + m.testFolder + " mirrors unknown library " + lib);
    }
  }
  std::vector<std::string> folders;
  for (const auto& entry : fs::directory_iterator(root / "tests")) {
    if (entry.is_directory()) folders.push_back(entry.path().filename().string());
  }
  std::sort(folders.begin(), folders.end());
  for (const std::string& f : folders) {
    if (!named.count(f)) {
      out.push_back("tests/" + f + " mirrors no source folder (add it to kTestMirrors)");
    }
  }
  return out;
}

}  // namespace bubblescope::architecture
