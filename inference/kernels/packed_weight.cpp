#include "inference/kernels/packed_weight.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "inference/kernels/quant_blocks.h"

namespace ragd::inference::kernels {

void PackedWeightDeleter::operator()(PackedWeight* p) const { delete p; }

void PackQ8Panels(const WeightView& w, const PackReleaseFn& release, PackedWeight* out) {
  assert(w.type == GgmlType::kQ8_0 && w.n_in % kQK == 0);
  const int64_t nb = w.n_in / kQK;
  const int64_t n_panels = (w.n_out + kPackedPanelRows - 1) / kPackedPanelRows;
  out->n_blocks = nb;
  out->panel_bytes = (static_cast<size_t>(nb) * (512 + 32) + 63) / 64 * 64;
  out->lines.assign(static_cast<size_t>(n_panels) * out->panel_bytes / 64, CacheLine{});
  // Rows are handed back to `release` about every 1 MiB read.
  const int64_t release_panels = std::max<int64_t>(1, (1 << 20) / (kPackedPanelRows * w.row_bytes));
  int64_t released = 0;  // rows
  for (int64_t p = 0; p < n_panels; ++p) {
    const int64_t rows = std::min<int64_t>(kPackedPanelRows, w.n_out - p * kPackedPanelRows);
    auto* panel = const_cast<uint8_t*>(out->panel(p));
    for (int64_t r = 0; r < rows; ++r) {
      const auto* blocks = reinterpret_cast<const BlockQ8_0*>(
          w.data + static_cast<size_t>(p * kPackedPanelRows + r) * w.row_bytes);
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* q = panel + 512 * b;
        for (int j = 0; j < kQK; ++j) {
          q[(j / 4 * kPackedPanelRows + r) * 4 + j % 4] = static_cast<uint8_t>(blocks[b].qs[j]) ^ 0x80;
        }
        std::memcpy(panel + 512 * nb + 32 * b + 2 * r, &blocks[b].d, sizeof(uint16_t));
      }
    }
    const int64_t done = p * kPackedPanelRows + rows;
    if (release && (p + 1 == n_panels || (p + 1) % release_panels == 0)) {
      release(w.data + static_cast<size_t>(released) * w.row_bytes,
              w.data + static_cast<size_t>(done) * w.row_bytes);
      released = done;
    }
  }
}

void DequantizePackedRow(const PackedWeight& p, int64_t row, int64_t n_in, float* out) {
  const int64_t panel = row / kPackedPanelRows, r = row % kPackedPanelRows;
  for (int64_t b = 0; b < n_in / kQK; ++b) {
    const uint8_t* q = p.quants(panel, b);
    const float d = HalfToFloat(p.scales(panel, b)[r]);
    for (int j = 0; j < kQK; ++j) {
      const auto v = static_cast<int8_t>(q[(j / 4 * kPackedPanelRows + r) * 4 + j % 4] ^ 0x80);
      out[kQK * b + j] = d * v;
    }
  }
}

}  // namespace ragd::inference::kernels
