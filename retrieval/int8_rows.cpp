#include "retrieval/int8_rows.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace ragd::retrieval {
namespace {

// out[i] = sum_j codes[i][j] * q[j], exact in int32 (|sum| <= dim * 127^2).
// One clone per instruction set, picked at load time; the int8 -> int16
// multiply-add vectorizes in each (512-bit needs AVX-512BW, hence the arch).
__attribute__((target_clones("arch=skylake-avx512", "avx2", "default"))) void DotRowsPortable(
    const int8_t* codes, size_t n, int dim, const int8_t* q, int32_t* out) {
  for (size_t i = 0; i < n; ++i) {
    const int8_t* __restrict c = codes + i * static_cast<size_t>(dim);
    int32_t sum = 0;
    for (int j = 0; j < dim; ++j) sum += static_cast<int32_t>(c[j]) * static_cast<int32_t>(q[j]);
    out[i] = sum;
  }
}

constexpr int kVnniMaxChunks = 32;  // dims up to 2048

// The same with AVX-512 VNNI (vpdpbusd: 64 unsigned x signed byte products
// per instruction), about twice as fast, which makes the scan memory-bound.
// vpdpbusd wants one operand unsigned: it gets q + 128, and 128 * sum_j c_ij
// (row_sums) is taken off again. Bytes past dim are masked to zero.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void DotRowsVnni(const int8_t* codes,
                                                                        const int32_t* row_sums, size_t n,
                                                                        int dim, const int8_t* q,
                                                                        int32_t* out) {
  const int chunks = (dim + 63) / 64;
  __m512i qv[kVnniMaxChunks];
  for (int ch = 0; ch < chunks; ++ch) {
    alignas(64) uint8_t bytes[64] = {};
    for (int j = 0; j < 64 && ch * 64 + j < dim; ++j) bytes[j] = static_cast<uint8_t>(q[ch * 64 + j] + 128);
    qv[ch] = _mm512_load_si512(bytes);
  }
  const int tail = dim - (chunks - 1) * 64;
  const __mmask64 mask = tail == 64 ? ~__mmask64{0} : ((__mmask64{1} << tail) - 1);
  for (size_t i = 0; i < n; ++i) {
    const int8_t* c = codes + i * static_cast<size_t>(dim);
    __m512i acc = _mm512_setzero_si512();
    for (int ch = 0; ch + 1 < chunks; ++ch)
      acc = _mm512_dpbusd_epi32(acc, qv[ch], _mm512_loadu_si512(c + ch * 64));
    acc = _mm512_dpbusd_epi32(acc, qv[chunks - 1], _mm512_maskz_loadu_epi8(mask, c + (chunks - 1) * 64));
    out[i] = _mm512_reduce_add_epi32(acc) - 128 * row_sums[i];
  }
}

bool HaveVnni() {
  static const bool have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vnni");
  return have;
}

// Codes of v (dim floats) into out; returns the scale.
float Quantize(const float* v, int dim, int8_t* out) {
  float max_abs = 0;
  for (int j = 0; j < dim; ++j) max_abs = std::max(max_abs, std::fabs(v[j]));
  const float scale = max_abs / 127.f;
  const float inv = scale > 0 ? 1.f / scale : 0.f;
  for (int j = 0; j < dim; ++j)
    out[j] = static_cast<int8_t>(std::clamp(std::nearbyint(v[j] * inv), -127.f, 127.f));
  return scale;
}

}  // namespace

void Int8Rows::Append(const float* rows, size_t n) {
  const size_t d = static_cast<size_t>(dim_);
  codes_.resize(codes_.size() + n * d);
  int8_t* out = codes_.data() + codes_.size() - n * d;
  for (size_t i = 0; i < n; ++i) {
    scales_.push_back(Quantize(rows + i * d, dim_, out + i * d));
    int32_t l1 = 0, sum = 0;
    for (size_t j = 0; j < d; ++j) {
      l1 += std::abs(out[i * d + j]);
      sum += out[i * d + j];
    }
    l1_.push_back(static_cast<float>(l1));
    sums_.push_back(sum);
  }
}

void Int8Rows::Compact(const std::vector<bool>& keep) {
  const size_t d = static_cast<size_t>(dim_);
  size_t w = 0;
  for (size_t i = 0; i < scales_.size() && i < keep.size(); ++i) {
    if (!keep[i]) continue;
    if (w != i) {
      std::copy_n(codes_.begin() + static_cast<ptrdiff_t>(i * d), d,
                  codes_.begin() + static_cast<ptrdiff_t>(w * d));
      scales_[w] = scales_[i];
      l1_[w] = l1_[i];
      sums_[w] = sums_[i];
    }
    ++w;
  }
  scales_.resize(w);
  l1_.resize(w);
  sums_.resize(w);
  codes_.resize(w * d);
}

void Int8Rows::Scores(const float* query, float* approx, float* bound) const {
  std::vector<int8_t> q8(static_cast<size_t>(dim_));
  const float t = Quantize(query, dim_, q8.data());
  float q_l1 = 0;
  for (int j = 0; j < dim_; ++j) q_l1 += std::fabs(query[j]);
  const size_t n = scales_.size();
  std::vector<int32_t> dots(n);
  if (allow_vnni_ && HaveVnni() && dim_ <= 64 * kVnniMaxChunks) {
    DotRowsVnni(codes_.data(), sums_.data(), n, dim_, q8.data(), dots.data());
  } else {
    DotRowsPortable(codes_.data(), n, dim_, q8.data(), dots.data());
  }
  // The bound's halves get a margin of max(1%, 2 * dim * 127 * 2^-24) for the
  // float rounding of Quantize, of s_i t d_i, and of the caller's float dot
  // product (a float sum of dim products is off by at most dim * 2^-24 times
  // the sum of their magnitudes, <= 127 s_i |q|_1).
  const float margin = 1.f + std::max(0.01f, 2.f * static_cast<float>(dim_) * 127.f * 6e-8f);
  const float a = 0.5f * q_l1 * margin, b = 0.5f * t * margin;
  for (size_t i = 0; i < n; ++i) {
    approx[i] = scales_[i] * t * static_cast<float>(dots[i]);
    bound[i] = scales_[i] * (a + b * l1_[i]);
  }
}

}  // namespace ragd::retrieval
