// Weights re-laid out once, at load, for a kernel set's products (see
// PackWeight in kernels.h). Internal to inference/kernels and its tests.
//
// The layouts so far, for Q8_0 and Q5_0 under AVX-512 VNNI: 16-row panels in
// the order the legacy panel kernel multiplies (x86_legacy_panel.h), kept in
// memory so that no step repacks the weight. Panel p holds rows 16p .. 16p+15
// (rows past the matrix are zero). Lane l of a block is its values 4l..4l+3;
// the kernel wants, per block and lane, 64 bytes: 4 unsigned quants of each
// row r at 4r. For block b (32 values of each row), at block_bytes*b:
//   Q8_0 (512 bytes): those 64 bytes for lane l at 64*l, each q + 128 (the
//     unsigned operand of vpdpbusd);
//   Q5_0 (320 bytes): the 5-bit quants split in two. At 64*k (k < 4): byte
//     4r+i holds the low 4 bits of value 4k+i of row r in its low nibble and
//     those of value 4(k+4)+i in its high nibble; at 256 + 8*l (l < 8): bit
//     4r+i of the 64-bit word is the fifth bit of value 4l+i of row r.
// Then, after the nb blocks, the scales: at block_bytes*nb + 32*b the 16
// rows' scales of block b, half precision. Same size as the GGUF blocks (34
// and 22 bytes per row and block); panels padded to whole cache lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "inference/kernels/kernels.h"

namespace ragd::inference::kernels {

struct KernelSet;

struct alignas(64) CacheLine {
  uint8_t bytes[64];
};

constexpr int64_t kPackedPanelRows = 16;

struct PackedWeight {
  const KernelSet* kernels = nullptr;  // the set whose mul_rows reads it
  GgmlType type = GgmlType::kQ8_0;
  int64_t n_blocks = 0;    // 32-value blocks per row
  size_t block_bytes = 0;  // quants of one block of a panel
  size_t panel_bytes = 0;
  std::vector<CacheLine> lines;

  const uint8_t* panel(int64_t p) const {
    return reinterpret_cast<const uint8_t*>(lines.data()) + static_cast<size_t>(p) * panel_bytes;
  }
  const uint8_t* quants(int64_t p, int64_t b) const { return panel(p) + block_bytes * b; }
  const uint16_t* scales(int64_t p, int64_t b) const {
    return reinterpret_cast<const uint16_t*>(panel(p) + block_bytes * n_blocks) + 16 * b;
  }
};

// Whether PackPanels takes weights of this type.
constexpr bool HasPackedPanels(GgmlType t) { return t == GgmlType::kQ8_0 || t == GgmlType::kQ5_0; }

// Packs a Q8_0 or Q5_0 weight into `out` (its kernels left to the caller),
// calling release(begin, end) on each range of w's bytes once it is read.
void PackPanels(const WeightView& w, const PackReleaseFn& release, PackedWeight* out);

// Row `row` of a packed weight as floats: bitwise DequantizeRowRef of the
// GGUF row.
void DequantizePackedRow(const PackedWeight& p, int64_t row, int64_t n_in, float* out);

}  // namespace ragd::inference::kernels
