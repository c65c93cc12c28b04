#include "engine/parallel/power_sgd_compressor.h"

#include <cmath>
#include <random>
#include <string>

namespace bubblescope::engine {

namespace {

// Orthonormalises the r columns of a (rows, r) row-major matrix in place.
void orthonormalizeColumns(std::span<float> a, int64_t rows, int32_t r) {
  for (int32_t j = 0; j < r; ++j) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int32_t k = 0; k < j; ++k) {
        double dot = 0.0;
        for (int64_t i = 0; i < rows; ++i) dot += double(a[i * r + j]) * double(a[i * r + k]);
        for (int64_t i = 0; i < rows; ++i) a[i * r + j] -= static_cast<float>(dot * a[i * r + k]);
      }
    }
    double norm2 = 0.0;
    for (int64_t i = 0; i < rows; ++i) norm2 += double(a[i * r + j]) * double(a[i * r + j]);
    const double norm = std::sqrt(norm2);
    // Nothing left of this column (M of rank < j + 1): it contributes nothing.
    const double inverse = norm > 0.0 ? 1.0 / norm : 0.0;
    for (int64_t i = 0; i < rows; ++i) a[i * r + j] = static_cast<float>(a[i * r + j] * inverse);
  }
}

}  // namespace

PowerSgdCompressor::PowerSgdCompressor(int64_t rows, int64_t cols, int32_t rank, uint64_t seed)
    : rows_(rows), cols_(cols), rank_(rank), feedback_(rows * cols), q_(cols * rank) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& x : q_) x = normal(engine);
}

Status PowerSgdCompressor::project(std::span<const float> grad, std::span<float> p) {
  BS_ASSIGN_OR_RETURN(m_, feedback_.corrected(grad, name()));
  const int32_t r = rank_;
  for (int64_t i = 0; i < rows_; ++i) {
    for (int32_t j = 0; j < r; ++j) {
      double sum = 0.0;
      for (int64_t c = 0; c < cols_; ++c) sum += double(m_[i * cols_ + c]) * double(q_[c * r + j]);
      p[i * r + j] = static_cast<float>(sum);
    }
  }
  return Status::ok();
}

void PowerSgdCompressor::backProject(std::span<float> p, std::span<float> q) const {
  const int32_t r = rank_;
  orthonormalizeColumns(p, rows_, r);
  for (int64_t c = 0; c < cols_; ++c) {  // Q (cols, r) = M^T P
    for (int32_t j = 0; j < r; ++j) {
      double sum = 0.0;
      for (int64_t i = 0; i < rows_; ++i) sum += double(m_[i * cols_ + c]) * double(p[i * r + j]);
      q[c * r + j] = static_cast<float>(sum);
    }
  }
}

void PowerSgdCompressor::finish(std::span<const float> p, std::span<const float> q, int32_t ranks,
                                std::span<float> decoded) {
  const int32_t r = rank_;
  for (int64_t i = 0; i < rows_; ++i) {
    for (int64_t c = 0; c < cols_; ++c) {
      double sum = 0.0;
      for (int32_t j = 0; j < r; ++j) sum += double(p[i * r + j]) * double(q[c * r + j]);
      decoded[i * cols_ + c] = static_cast<float>(sum);
    }
  }
  decoded_.resize(decoded.size());
  const float share = 1.0f / static_cast<float>(ranks);
  for (size_t i = 0; i < decoded.size(); ++i)
    decoded_[i] = ranks == 1 ? decoded[i] : decoded[i] * share;
  feedback_.keep(decoded_);
  q_.assign(q.begin(), q.end());
}

Status PowerSgdCompressor::compress(std::span<const float> grad, CompressedGrad& out) {
  out = CompressedGrad{};
  out.elements = rows_ * cols_;
  out.values.resize((rows_ + cols_) * rank_);
  const std::span<float> p(out.values.data(), rows_ * rank_);
  const std::span<float> q(out.values.data() + rows_ * rank_, cols_ * rank_);
  BS_RETURN_IF_ERROR(project(grad, p));
  backProject(p, q);
  std::vector<float> decoded(rows_ * cols_);
  finish(p, q, 1, decoded);
  return Status::ok();
}

Status PowerSgdCompressor::decompress(const CompressedGrad& in, std::span<float> out) const {
  if (Status s = checkDecodedSize(in, out, name()); !s.isOk()) return s;
  const int32_t r = rank_;
  if (in.elements != rows_ * cols_ ||
      static_cast<int64_t>(in.values.size()) != (rows_ + cols_) * r) {
    return Status::invalidArgument("powersgd: " + std::to_string(in.values.size()) +
                                   " factor values for a " + std::to_string(rows_) + " x " +
                                   std::to_string(cols_) + " matrix at rank " + std::to_string(r));
  }
  const float* p = in.values.data();
  const float* q = p + rows_ * r;
  for (int64_t i = 0; i < rows_; ++i) {
    for (int64_t c = 0; c < cols_; ++c) {
      double sum = 0.0;
      for (int32_t j = 0; j < r; ++j) sum += double(p[i * r + j]) * double(q[c * r + j]);
      out[i * cols_ + c] = static_cast<float>(sum);
    }
  }
  return Status::ok();
}

}  // namespace bubblescope::engine
