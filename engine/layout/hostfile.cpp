#include "engine/layout/hostfile.h"

#include <fstream>
#include <sstream>

namespace bubblescope::layout {

Result<std::vector<std::string>> hostfileHosts(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::notFound("hostfile '" + path + "' cannot be read");
  std::vector<std::string> hosts;
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string host, word;
    if (!(words >> host)) continue;
    std::string slots;
    while (words >> word) {
      if (word.rfind("slots=", 0) == 0) slots = word.substr(6);
    }
    hosts.push_back(slots.empty() ? host : host + ":" + slots);
  }
  if (hosts.empty()) return Status::invalidArgument("hostfile '" + path + "' names no host");
  return hosts;
}

}  // namespace bubblescope::layout
