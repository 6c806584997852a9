// A compact int8 copy of the flat index's vectors, scanned instead of the
// float32 originals (a quarter of the memory traffic, which is what bounds a
// single-query exact scan), with a bound on the error of every approximate
// score so that an exact top-k can be recovered by rescoring the few rows the
// bound cannot rule out. Internal to retrieval/ (used by VectorIndex).
//
// Row i is stored as codes c_i (dim int8 in [-127, 127]), a scale s_i =
// max_j |v_ij| / 127 with c_ij = round(v_ij / s_i), so |v_ij - s_i c_ij| <=
// s_i / 2, and L_i = sum_j |c_ij|. The query is quantized the same way (q8,
// scale t) and the scan is an exact integer dot product d_i = q8 . c_i; then
//   q . v_i = s_i t d_i + s_i (q - t q8) . c_i + q . (v_i - s_i c_i)
// so |q . v_i - s_i t d_i| <= s_i (t / 2 * L_i + |q|_1 / 2).
//
// Not thread-safe for writes; concurrent const calls are safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ragd::retrieval {

class Int8Rows {
 public:
  // allow_vnni = false keeps to the portable kernel (for tests).
  explicit Int8Rows(int dim = 0, bool allow_vnni = true) : dim_(dim), allow_vnni_(allow_vnni) {}

  // Appends n rows of dim floats.
  void Append(const float* rows, size_t n);
  // Keeps the rows whose keep[i] is true, in order.
  void Compact(const std::vector<bool>& keep);
  void Clear() { codes_.clear(), scales_.clear(), l1_.clear(), sums_.clear(); }
  size_t size() const { return scales_.size(); }

  // For every row: approx[i] = s_i t d_i and bound[i] >= |q . v_i - approx[i]|,
  // with a margin that also covers float rounding here and in a float dot
  // product q . v_i computed by the caller.
  void Scores(const float* query, float* approx, float* bound) const;

 private:
  int dim_;
  bool allow_vnni_;
  std::vector<int8_t> codes_;  // size() x dim_
  std::vector<float> scales_;
  std::vector<float> l1_;      // L_i
  std::vector<int32_t> sums_;  // sum_j c_ij
};

}  // namespace ragd::retrieval
