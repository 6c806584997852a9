// Weights re-laid out once, at load, for a kernel set's products (see
// PackWeight in kernels.h). Internal to inference/kernels and its tests.
//
// The one layout so far, for Q8_0 under AVX-512 VNNI: 16-row panels, the
// layout the legacy panel kernel otherwise builds per product
// (x86_legacy_panel.h), kept in memory so that no step repacks or unpacks
// the weight. Panel p holds rows 16p .. 16p+15 (rows past the matrix are
// zero); for its block b (32 values of each row):
//   quants at b*512: the 4 bytes of lane l (values 4l..4l+3) of row r at
//     (l*16 + r)*4, each q + 128 (the unsigned operand of vpdpbusd);
//   scales at nb*512 + b*32: the 16 rows' block scales, half precision.
// Same size as the GGUF blocks (34 bytes per row and block), panels padded
// to whole cache lines.
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
  int64_t n_blocks = 0;                // 32-value blocks per row
  size_t panel_bytes = 0;
  std::vector<CacheLine> lines;

  const uint8_t* panel(int64_t p) const { return lines.front().bytes + static_cast<size_t>(p) * panel_bytes; }
  const uint8_t* quants(int64_t p, int64_t b) const { return panel(p) + 512 * b; }
  const uint16_t* scales(int64_t p, int64_t b) const {
    return reinterpret_cast<const uint16_t*>(panel(p) + 512 * n_blocks) + 16 * b;
  }
};

// Packs a Q8_0 weight into `out` (its kernels left to the caller), calling
// release(begin, end) on each range of w's bytes once it has been read.
void PackQ8Panels(const WeightView& w, const PackReleaseFn& release, PackedWeight* out);

// Row `row` of a packed Q8_0 weight as floats: bitwise DequantizeRowRef of
// the GGUF row.
void DequantizePackedRow(const PackedWeight& p, int64_t row, int64_t n_in, float* out);

}  // namespace ragd::inference::kernels
