#include "engine/synthetic_corpus.h"

#include <array>

#include "engine/rng.h"

namespace bubblescope::engine {
namespace {

constexpr uint64_t kCorpusSeed = 0x5eed'b0bb'1e5c'0de5ULL;

const std::array kAdjectives = {"quick", "lazy", "small", "big", "red", "old", "young", "happy"};
const std::array kNouns = {"fox", "dog", "cat", "bird", "horse", "mouse", "owl", "fish"};
const std::array kVerbs = {"chases", "sees", "likes", "follows", "finds", "helps"};
const std::array kPlaces = {"by the river", "in the garden", "on the hill", "under the tree",
                            "near the house"};

template <class Array>
const char* pick(Rng& rng, const Array& words) {
  return words[rng.below(words.size())];
}

}  // namespace

std::string syntheticCorpus(size_t bytes) {
  Rng rng(kCorpusSeed);
  std::string text;
  text.reserve(bytes + 128);
  while (text.size() < bytes) {
    // the <adj> <noun> <verb> a|the <adj> <noun> [<place>].
    text += "the ";
    text += pick(rng, kAdjectives);
    text += ' ';
    text += pick(rng, kNouns);
    text += ' ';
    text += pick(rng, kVerbs);
    text += rng.below(2) == 0 ? " a " : " the ";
    text += pick(rng, kAdjectives);
    text += ' ';
    text += pick(rng, kNouns);
    if (rng.below(2) == 0) {
      text += ' ';
      text += pick(rng, kPlaces);
    }
    text += rng.below(4) == 0 ? ".\n" : ". ";
  }
  text.resize(bytes);
  return text;
}

}  // namespace bubblescope::engine
