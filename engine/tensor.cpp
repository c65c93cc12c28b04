#include "engine/tensor.h"

namespace bubblescope::engine {

std::string shapeToString(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

}  // namespace bubblescope::engine
