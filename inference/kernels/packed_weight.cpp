#include "inference/kernels/packed_weight.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "inference/kernels/quant_blocks.h"

namespace ragd::inference::kernels {
namespace {

// The 32 unsigned quants of block b of a GGUF row (Q8_0: q + 128; Q5_0: the
// 5-bit q) and its scale.
void ReadBlock(GgmlType type, const uint8_t* row, int64_t b, uint8_t q[kQK], uint16_t* d) {
  if (type == GgmlType::kQ8_0) {
    const auto& blk = reinterpret_cast<const BlockQ8_0*>(row)[b];
    for (int j = 0; j < kQK; ++j) q[j] = static_cast<uint8_t>(blk.qs[j]) ^ 0x80;
    *d = blk.d;
  } else {
    const auto& blk = reinterpret_cast<const BlockQ5_0*>(row)[b];
    UnpackQ5Quants(blk, q);
    *d = blk.d;
  }
}

// Byte j % 4 of lane j / 4 of panel row r in the kernel's 64-byte lane
// vectors: a packed Q8_0 block holds value j of row r there.
int LaneByte(int j, int r) { return 64 * (j / 4) + 4 * r + j % 4; }

// Where value j of panel row r sits in a packed Q5_0 block: its nibble's
// byte and shift (lanes 4..7 in the high nibbles of lanes 0..3), its fifth
// bit's byte and bit.
struct Spot {
  int byte, shift, high_byte, high_bit;
};
Spot SpotOf(int j, int r) {
  const int lane = j / 4, at = 4 * r + j % 4;
  return {LaneByte(j % 16, r), lane < 4 ? 0 : 4, 256 + 8 * lane + at / 8, at % 8};
}

// Where value v (< 256) of panel row r sits in a packed Q4_K super-block:
// its byte and the shift of its nibble.
struct NibbleSpot {
  size_t byte;
  int shift;
};
NibbleSpot Q4KSpotOf(int v, int r) {
  const int c = v / 64, in = v % 64, t = in % 32 / 4;
  return {static_cast<size_t>(64 * (8 * c + t) + 4 * r + in % 4), in < 32 ? 0 : 4};
}

// Where value v (< 256) of panel row r sits in a packed Q6_K super-block:
// the byte of its low 4 bits and their shift, the byte of its top 2 bits and
// their shift.
struct Q6KSpot {
  size_t low;
  int low_shift;
  size_t high;
  int high_shift;
};
Q6KSpot Q6KSpotOf(int v, int r) {
  const int k = v / 32, l = v % 32 / 4, at = 4 * r + v % 4;
  return {PackedQ6K::kLane * l + 64 * (k % 4) + at, 4 * (k / 4),
          PackedQ6K::kLane * l + PackedQ6K::kHigh + 64 * (k % 2) + at, 2 * (k / 2)};
}

// Whether a packed type's blocks are 256-value super-blocks, each packed
// whole (scales included) in its panel block.
bool InSuperBlocks(GgmlType t) { return t == GgmlType::kQ4_K || t == GgmlType::kQ6_K; }

// Row r of a panel from GGUF Q4_K row `row` (n_super super-blocks).
void PackQ4KRow(const uint8_t* row, int64_t n_super, int r, PackedWeight* out, int64_t panel) {
  const auto* blocks = reinterpret_cast<const BlockQ4_K*>(row);
  for (int64_t b = 0; b < n_super; ++b) {
    const BlockQ4_K& blk = blocks[b];
    auto* q = const_cast<uint8_t*>(out->quants(panel, b));
    uint8_t v[kQKK];
    UnpackQ4K(blk, v);
    for (int j = 0; j < kQKK; ++j) {
      const NibbleSpot s = Q4KSpotOf(j, r);
      q[s.byte] |= static_cast<uint8_t>(v[j] << s.shift);
    }
    for (int j = 0; j < 8; ++j)
      UnpackScaleMin(j, blk.scales, &q[PackedQ4K::kScales + 16 * j + r], &q[PackedQ4K::kMins + 16 * j + r]);
    std::memcpy(q + PackedQ4K::kD + 2 * r, &blk.d, 2);
    std::memcpy(q + PackedQ4K::kDmin + 2 * r, &blk.dmin, 2);
  }
}

// Row r of a panel from GGUF Q6_K row `row` (n_super super-blocks).
void PackQ6KRow(const uint8_t* row, int64_t n_super, int r, PackedWeight* out, int64_t panel) {
  const auto* blocks = reinterpret_cast<const BlockQ6_K*>(row);
  for (int64_t b = 0; b < n_super; ++b) {
    const BlockQ6_K& blk = blocks[b];
    auto* q = const_cast<uint8_t*>(out->quants(panel, b));
    uint8_t v[kQKK];
    UnpackQ6K(blk, v);
    for (int j = 0; j < kQKK; ++j) {
      const Q6KSpot s = Q6KSpotOf(j, r);
      q[s.low] |= static_cast<uint8_t>((v[j] & 15) << s.low_shift);
      q[s.high] |= static_cast<uint8_t>((v[j] >> 4) << s.high_shift);
    }
    for (int j = 0; j < 16; ++j) q[PackedQ6K::kScales + 16 * j + r] = static_cast<uint8_t>(blk.scales[j]);
    const float d = HalfToFloat(blk.d);
    std::memcpy(q + PackedQ6K::kD + 4 * r, &d, 4);
  }
}

// Row r of super-block b of a packed K-quant panel, as DequantizeRowRef gives
// it.
void DequantizePackedSuper(const PackedWeight& p, int64_t panel, int r, int64_t b, float* out) {
  const uint8_t* q = p.quants(panel, b);
  if (p.type == GgmlType::kQ6_K) {  // d * sc * (q - 32)
    float d;
    std::memcpy(&d, q + PackedQ6K::kD + 4 * r, 4);
    for (int v = 0; v < kQKK; ++v) {
      const auto sc = static_cast<int8_t>(q[PackedQ6K::kScales + 16 * (v / 16) + r]);
      const Q6KSpot s = Q6KSpotOf(v, r);
      const int u = ((q[s.low] >> s.low_shift) & 15) | ((q[s.high] >> s.high_shift) & 3) << 4;
      out[v] = d * sc * (u - 32);
    }
    return;
  }
  uint16_t hd, hm;  // Q4_K: d * sc * q - dmin * mn
  std::memcpy(&hd, q + PackedQ4K::kD + 2 * r, 2);
  std::memcpy(&hm, q + PackedQ4K::kDmin + 2 * r, 2);
  const float d = HalfToFloat(hd), dmin = HalfToFloat(hm);
  for (int v = 0; v < kQKK; ++v) {
    const NibbleSpot s = Q4KSpotOf(v, r);
    const uint8_t sc = q[PackedQ4K::kScales + 16 * (v / 32) + r],
                  mn = q[PackedQ4K::kMins + 16 * (v / 32) + r];
    out[v] = d * sc * static_cast<uint8_t>((q[s.byte] >> s.shift) & 15) - dmin * mn;
  }
}

}  // namespace

void PackedWeightDeleter::operator()(PackedWeight* p) const { delete p; }

void PackPanels(const WeightView& w, const PackReleaseFn& release, PackedWeight* out) {
  const bool k_quant = InSuperBlocks(w.type);
  assert(HasPackedPanels(w.type) && w.n_in % (k_quant ? kQKK : kQK) == 0);
  const bool q8 = w.type == GgmlType::kQ8_0;
  const int64_t nb = w.n_in / (k_quant ? kQKK : kQK);
  const int64_t n_panels = (w.n_out + kPackedPanelRows - 1) / kPackedPanelRows;
  out->type = w.type;
  out->n_blocks = nb;
  out->block_bytes = w.type == GgmlType::kQ4_K   ? PackedQ4K::kBytes
                     : w.type == GgmlType::kQ6_K ? PackedQ6K::kBytes
                     : q8                        ? 512
                                                 : 320;
  const size_t scale_bytes = k_quant ? 0 : 32;
  out->panel_bytes = (static_cast<size_t>(nb) * (out->block_bytes + scale_bytes) + 63) / 64 * 64;
  out->lines.assign(static_cast<size_t>(n_panels) * out->panel_bytes / 64, CacheLine{});
  // Rows are handed back to `release` about every 1 MiB read.
  const int64_t release_panels = std::max<int64_t>(1, (1 << 20) / (kPackedPanelRows * w.row_bytes));
  int64_t released = 0;  // rows
  for (int64_t p = 0; p < n_panels; ++p) {
    const int64_t rows = std::min<int64_t>(kPackedPanelRows, w.n_out - p * kPackedPanelRows);
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* row = w.data + static_cast<size_t>(p * kPackedPanelRows + r) * w.row_bytes;
      if (w.type == GgmlType::kQ4_K) {
        PackQ4KRow(row, nb, static_cast<int>(r), out, p);
        continue;
      }
      if (w.type == GgmlType::kQ6_K) {
        PackQ6KRow(row, nb, static_cast<int>(r), out, p);
        continue;
      }
      for (int64_t b = 0; b < nb; ++b) {
        auto* q = const_cast<uint8_t*>(out->quants(p, b));
        uint8_t v[kQK];
        uint16_t d;
        ReadBlock(w.type, row, b, v, &d);
        for (int j = 0; j < kQK; ++j) {
          if (q8) {
            q[LaneByte(j, static_cast<int>(r))] = v[j];
          } else {
            const Spot s = SpotOf(j, static_cast<int>(r));
            q[s.byte] |= static_cast<uint8_t>((v[j] & 15) << s.shift);
            q[s.high_byte] |= static_cast<uint8_t>((v[j] >> 4) << s.high_bit);
          }
        }
        std::memcpy(const_cast<uint16_t*>(out->scales(p, b)) + r, &d, sizeof(d));
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
  const int64_t panel = row / kPackedPanelRows;
  const int r = static_cast<int>(row % kPackedPanelRows);
  if (InSuperBlocks(p.type)) {
    for (int64_t b = 0; b < n_in / kQKK; ++b) DequantizePackedSuper(p, panel, r, b, out + kQKK * b);
    return;
  }
  for (int64_t b = 0; b < n_in / kQK; ++b) {
    const uint8_t* q = p.quants(panel, b);
    const float d = HalfToFloat(p.scales(panel, b)[r]);
    for (int j = 0; j < kQK; ++j) {
      if (p.type == GgmlType::kQ8_0) {
        const auto v = static_cast<int8_t>(q[LaneByte(j, r)] ^ 0x80);
        out[kQK * b + j] = d * v;
      } else {  // as DequantizeRowRef: d * (q - 16) + 0 (no min)
        const Spot s = SpotOf(j, r);
        const int v = ((q[s.byte] >> s.shift) & 15) | ((q[s.high_byte] >> s.high_bit) & 1) << 4;
        out[kQK * b + j] = d * static_cast<float>(v - 16) + 0.0f;
      }
    }
  }
}

}  // namespace ragd::inference::kernels
