#include "engine/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/available_memory.h"

namespace bubblescope::engine {

std::vector<int32_t> ByteTokenizer::encode(std::string_view text) {
  std::vector<int32_t> tokens;
  tokens.reserve(text.size());
  for (unsigned char c : text) tokens.push_back(static_cast<int32_t>(c));
  return tokens;
}

std::string ByteTokenizer::decode(const std::vector<int32_t>& tokens) {
  std::string text;
  text.reserve(tokens.size());
  for (int32_t t : tokens) text.push_back(t >= 0 && t < kVocabSize ? static_cast<char>(t) : '?');
  return text;
}

Result<std::vector<int32_t>> loadTokenFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Status::notFound("data file '" + path + "' does not exist");
  }
  if (std::filesystem::is_directory(path, ec)) {
    return Status::invalidArgument("data file '" + path + "' is a directory");
  }
  BS_RETURN_IF_ERROR(checkFileFitsInMemory("data file '" + path + "'", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::ioError("cannot open data file '" + path + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  if (text.empty()) return Status::invalidArgument("data file '" + path + "' is empty");
  return ByteTokenizer::encode(text);
}

}  // namespace bubblescope::engine
