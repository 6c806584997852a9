// Weights re-laid out once, at load, for a kernel set's products (see
// PackWeight in kernels.h). Internal to inference/kernels and its tests.
//
// The layouts so far, for Q8_0 and Q5_0 under AVX-512 VNNI (Q4_K, Q6_K below):
// 16-row panels in the order the legacy panel kernel multiplies
// (x86/q4_0_q5_0_q8_0_avx512.h), kept in memory so that no step repacks the weight.
// Panel p holds rows 16p .. 16p+15 (rows past the matrix are zero). Lane l
// of a block is its values 4l..4l+3; the kernel wants, per block and lane,
// 64 bytes: 4 unsigned quants of each row r at 4r. For block b (32 values of
// each row), at block_bytes*b:
//   Q8_0 (512 bytes): those 64 bytes for lane l at 64*l, each q + 128 (the
//     unsigned operand of vpdpbusd);
//   Q5_0 (320 bytes): the 5-bit quants split in two. At 64*k (k < 4): byte
//     4r+i holds the low 4 bits of value 4k+i of row r in its low nibble and
//     those of value 4(k+4)+i in its high nibble; at 256 + 8*l (l < 8): bit
//     4r+i of the 64-bit word is the fifth bit of value 4l+i of row r.
// Then, after the nb blocks, the scales: at block_bytes*nb + 32*b the 16
// rows' scales of block b, half precision. Same size as the GGUF blocks (34
// and 22 bytes per row and block); panels padded to whole cache lines.
//
// Q4_K under AVX-512 VNNI: the same 16-row panels, one "block" per 256-value
// super-block (2368 bytes), in the order of the K-quant panel kernel
// (x86/panel_avx512.h: its Repack, done once here instead of at every step):
//   at 64*(8c + t) (c < 4, t < 8): byte 4r+i holds value 64c + 4t + i of row r
//     (sub-block 2c) in its low nibble, value 64c + 32 + 4t + i (sub-block
//     2c + 1) in its high nibble;
//   at 2048 + 16*j + r: the 6-bit scale of sub-block j of row r; at
//     2176 + 16*j + r its min;
//   at 2304 + 2*r: d of row r, at 2336 + 2*r: dmin, half precision.
// 148 bytes per row and super-block (the GGUF block: 144).
//
// Q6_K under AVX-512 VNNI: the same 16-row panels, one "block" per 256-value
// super-block (3392 bytes, whole cache lines), for the Q6_K panel kernel
// (x86/q6_k_avx512.h). Value 32k + 4l + i of row r (chunk k < 8, lane l < 8,
// i < 4) sits at byte 4r+i of lane l's 384 bytes at 384*l:
//   at 64*p (p < 4): in the low nibble, the low 4 bits of the quant of chunk
//     p; in the high nibble, those of chunk p + 4;
//   at 256 + 64*h (h < 2): at bits 2j, 2j+1 (j < 4), the quant's top 2 bits
//     for chunk h + 2j;
// then at 3072 + 16*j + r: the int8 scale of sub-block j (16 values) of row
// r; at 3328 + 4*r: d of row r as a float (exactly the half).
// 212 bytes per row and super-block (the GGUF block: 210).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory_resource>
#include <vector>

#include "inference/kernels/kernels.h"

namespace ragd::inference::kernels {

struct KernelSet;

struct alignas(64) CacheLine {
  uint8_t bytes[64];
};

constexpr int64_t kPackedPanelRows = 16;

struct PackedWeight {
  explicit PackedWeight(std::pmr::memory_resource* memory) : lines(memory) {}

  const KernelSet* kernels = nullptr;  // the set whose mul_rows reads it
  GgmlType type = GgmlType::kQ8_0;
  int64_t n_blocks = 0;    // blocks per row (K-quants: 256-value super-blocks)
  size_t block_bytes = 0;  // quants of one block of a panel (K-quants: all of it)
  size_t panel_bytes = 0;
  std::pmr::vector<CacheLine> lines;  // from the memory PackWeight was given

  const uint8_t* panel(int64_t p) const {
    return reinterpret_cast<const uint8_t*>(lines.data()) + static_cast<size_t>(p) * panel_bytes;
  }
  const uint8_t* quants(int64_t p, int64_t b) const { return panel(p) + block_bytes * b; }
  // Q8_0 and Q5_0 only.
  const uint16_t* scales(int64_t p, int64_t b) const {
    return reinterpret_cast<const uint16_t*>(panel(p) + block_bytes * n_blocks) + 16 * b;
  }
};

// Where the parts of a packed Q4_K super-block lie (see above).
struct PackedQ4K {
  static constexpr size_t kScales = 2048, kMins = 2176, kD = 2304, kDmin = 2336, kBytes = 2368;
};

// Where the parts of a packed Q6_K super-block lie (see above).
struct PackedQ6K {
  static constexpr size_t kLane = 384, kHigh = 256, kScales = 3072, kD = 3328, kBytes = 3392;
};

// Whether PackPanels takes weights of this type.
constexpr bool HasPackedPanels(GgmlType t) {
  return t == GgmlType::kQ8_0 || t == GgmlType::kQ5_0 || t == GgmlType::kQ4_K || t == GgmlType::kQ6_K;
}

// Packs a Q8_0, Q5_0, Q4_K or Q6_K weight into `out` (its kernels left to the caller),
// calling release(begin, end) on each range of w's bytes once it is read.
void PackPanels(const WeightView& w, const PackReleaseFn& release, PackedWeight* out);

// Row `row` of a packed weight as floats: bitwise DequantizeRowRef of the
// GGUF row.
void DequantizePackedRow(const PackedWeight& p, int64_t row, int64_t n_in, float* out);

}  // namespace ragd::inference::kernels
