// MatMul front end: picks the kernel set once, quantizes the activation rows,
// and splits the output rows over the thread pool.
#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "inference/kernels/kernel_set.h"

namespace ragd::inference {
namespace kernels {
namespace {

constexpr int64_t kRowGrain = 16;  // output rows per work item (one weight panel)

bool CpuHasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

bool CpuHasAvx512Vnni() {
  return CpuHasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

const KernelSet& ChooseKernels() {
  const KernelSet* sets[3];
  const int n = SupportedKernelSets(sets, 3);
  if (const char* want = std::getenv("RAGD_KERNELS")) {
    for (int i = 0; i < n; ++i) {
      if (std::strcmp(sets[i]->name, want) == 0) return *sets[i];
    }
  }
  return *sets[0];
}

}  // namespace

int SupportedKernelSets(const KernelSet** out, int capacity) {
  int n = 0;
  if (n < capacity && CpuHasAvx512Vnni()) out[n++] = &kAvx512Kernels;
  if (n < capacity && CpuHasAvx2()) out[n++] = &kAvx2Kernels;
  if (n < capacity) out[n++] = &kScalarKernels;
  return n;
}

const KernelSet& ActiveKernels() {
  static const KernelSet& ks = ChooseKernels();
  return ks;
}

void MatMulWith(const KernelSet& ks, const WeightView& packed_or_not, const float* x, int64_t m, float* y,
                ThreadPool* pool) {
  if (m <= 0 || packed_or_not.n_out <= 0) return;
  // A weight packed for another set is read in its GGUF layout.
  WeightView w = packed_or_not;
  if (w.packed != nullptr && w.packed->kernels != &ks) w.packed = nullptr;
  const ActKind kind = ActKindFor(w.type);
  assert(kind != ActKind::kUnsupported && "MatMul: unsupported weight type");
  const uint8_t* act = reinterpret_cast<const uint8_t*>(x);
  size_t act_stride = static_cast<size_t>(w.n_in) * sizeof(float);
  thread_local std::vector<uint8_t> scratch;
  if (kind != ActKind::kF32) {
    act_stride = ActRowBytes(w.type, w.n_in);
    if (scratch.size() < act_stride * static_cast<size_t>(m)) scratch.resize(act_stride * m);
    uint8_t* q = scratch.data();
    auto quantize = [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i) {
        if (kind == ActKind::kQ8A) {
          ks.quantize_q8a(x + i * w.n_in, w.n_in, reinterpret_cast<BlockQ8A*>(q + i * act_stride));
        } else {
          ks.quantize_q8k(x + i * w.n_in, w.n_in, reinterpret_cast<BlockQ8K*>(q + i * act_stride));
        }
      }
    };
    if (pool != nullptr && m >= 8) {
      pool->RunDynamic(m, std::max<int64_t>(1, m / (4 * pool->size())), quantize);
    } else {
      quantize(0, m, 0);
    }
    act = q;
  }
  const void* prepared = ks.prepare != nullptr ? ks.prepare(w, act, act_stride, m, pool) : nullptr;
  const int64_t n_items = (w.n_out + kRowGrain - 1) / kRowGrain;
  auto work = [&](int64_t begin, int64_t end, int) {
    if (begin >= end) return;
    const int64_t r1 = end * kRowGrain < w.n_out ? end * kRowGrain : w.n_out;
    ks.mul_rows(w, act, act_stride, m, prepared, y, w.n_out, begin * kRowGrain, r1);
  };
  if (pool != nullptr && pool->size() > 1 && n_items > 1) {
    // About 8 chunks per thread: balances a busy machine, costs one atomic each.
    const int64_t grain = std::max<int64_t>(1, n_items / (8 * pool->size()));
    pool->RunDynamic(n_items, grain, work);
  } else {
    work(0, n_items, 0);
  }
}

}  // namespace kernels

void MatMul(const WeightView& w, const float* x, int64_t m, float* y, ThreadPool* pool) {
  kernels::MatMulWith(kernels::ActiveKernels(), w, x, m, y, pool);
}

PackedWeightPtr PackWeight(const WeightView& w, const PackReleaseFn& release) {
  const kernels::KernelSet& ks = kernels::ActiveKernels();
  if (ks.pack == nullptr || w.packed != nullptr) return nullptr;
  PackedWeightPtr p(new kernels::PackedWeight);
  if (!ks.pack(w, release, p.get())) return nullptr;
  p->kernels = &ks;
  return p;
}

void DequantizeRow(const WeightView& w, int64_t row, float* out) {
  if (w.packed != nullptr) return kernels::DequantizePackedRow(*w.packed, row, w.n_in, out);
  kernels::DequantizeRowRef(w.type, w.data + static_cast<size_t>(row) * w.row_bytes, w.n_in, out);
}

std::string KernelIsaName() { return kernels::ActiveKernels().name; }

}  // namespace ragd::inference
