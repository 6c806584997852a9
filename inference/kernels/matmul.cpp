// MatMul front end: quantizes the activation rows for the active kernel set
// (dispatch.cpp) and splits the output rows over the thread pool.
#include <algorithm>
#include <cassert>
#include <cstring>
#include <span>
#include <vector>

#include "common/huge_pages.h"
#include "inference/kernels/kernel_set.h"

namespace ragd::inference {
namespace kernels {
namespace {

constexpr int64_t kRowGrain = 16;  // output rows per work item (one weight panel)
constexpr size_t kMaxTargets = 4;  // weights one MatMulShared pass takes at most

}  // namespace

namespace {

// The activation rows as the kernels of w's type read them: quantized into
// thread-local scratch (Q8A or Q8K blocks), or the floats themselves.
struct Acts {
  const uint8_t* data;
  size_t stride;
};

Acts QuantizeActs(const KernelSet& ks, const WeightView& w, const float* x, int64_t m, ThreadPool* pool) {
  const ActKind kind = ActKindFor(w.type);
  assert(kind != ActKind::kUnsupported && "MatMul: unsupported weight type");
  if (kind == ActKind::kF32)
    return {reinterpret_cast<const uint8_t*>(x), static_cast<size_t>(w.n_in) * sizeof(float)};
  const size_t stride = ActRowBytes(w.type, w.n_in);
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < stride * static_cast<size_t>(m)) scratch.resize(stride * m);
  uint8_t* q = scratch.data();
  auto quantize = [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) {
      if (kind == ActKind::kQ8A) {
        ks.quantize_q8a(x + i * w.n_in, w.n_in, reinterpret_cast<BlockQ8A*>(q + i * stride));
      } else {
        ks.quantize_q8k(x + i * w.n_in, w.n_in, reinterpret_cast<BlockQ8K*>(q + i * stride));
      }
    }
  };
  if (pool != nullptr && m >= 8) {
    pool->RunDynamic(m, std::max<int64_t>(1, m / (4 * pool->size())), quantize);
  } else {
    quantize(0, m, 0);
  }
  return {q, stride};
}

// A weight packed for another set is read in its GGUF layout.
WeightView ForSet(const KernelSet& ks, const WeightView& w) {
  WeightView v = w;
  if (v.packed != nullptr && v.packed->kernels != &ks) v.packed = nullptr;
  return v;
}

// One weight's rows times the activations: the weight as this set reads it,
// what the set's prepare() gave for it, and the output.
struct Product {
  WeightView w;
  const void* prepared;
  float* y;
};

// The products' 16-row panels, all of them as work items of one pass over
// the pool.
void MulProducts(const KernelSet& ks, std::span<const Product> products, const Acts& acts, int64_t m,
                 ThreadPool* pool) {
  assert(products.size() <= kMaxTargets);
  int64_t first_item[kMaxTargets + 1] = {0};
  const size_t n = products.size();
  for (size_t i = 0; i < n; ++i) {
    first_item[i + 1] =
        first_item[i] + (std::max<int64_t>(0, products[i].w.n_out) + kRowGrain - 1) / kRowGrain;
  }
  const int64_t n_items = first_item[n];
  auto work = [&](int64_t begin, int64_t end, int) {
    for (size_t i = 0; i < n && begin < end; ++i) {
      const int64_t lo = std::max(begin, first_item[i]), hi = std::min(end, first_item[i + 1]);
      if (lo >= hi) continue;
      const Product& p = products[i];
      const int64_t r0 = (lo - first_item[i]) * kRowGrain;
      const int64_t r1 = std::min((hi - first_item[i]) * kRowGrain, p.w.n_out);
      ks.mul_rows(p.w, acts.data, acts.stride, m, p.prepared, p.y, p.w.n_out, r0, r1);
    }
  };
  if (pool != nullptr && pool->size() > 1 && n_items > 1) {
    // About 8 chunks per thread: balances a busy machine, costs one atomic each.
    const int64_t grain = std::max<int64_t>(1, n_items / (8 * pool->size()));
    pool->RunDynamic(n_items, grain, work);
  } else {
    work(0, n_items, 0);
  }
}

}  // namespace

void MatMulSharedWith(const KernelSet& ks, std::span<const MatMulTarget> targets, const float* x, int64_t m,
                      ThreadPool* pool) {
  if (m <= 0 || targets.empty()) return;
  const WeightView& first = *targets[0].w;
  const bool one_input = std::all_of(targets.begin(), targets.end(), [&](const MatMulTarget& t) {
    return t.w->n_in == first.n_in && ActKindFor(t.w->type) == ActKindFor(first.type);
  });
  if (targets.size() > kMaxTargets || !one_input) {
    for (const MatMulTarget& t : targets) MatMulWith(ks, *t.w, x, m, t.y, pool);
    return;
  }
  const Acts acts = QuantizeActs(ks, first, x, m, pool);
  // A set's prepared activations may live in one buffer per thread (the
  // K-quant panels'), which the next prepare() call overwrites: a prepared
  // product runs at once, alone; the others share one pass.
  Product shared[kMaxTargets];
  size_t n_shared = 0;
  for (const MatMulTarget& t : targets) {
    Product p{ForSet(ks, *t.w), nullptr, t.y};
    if (ks.prepare != nullptr) p.prepared = ks.prepare(p.w, acts.data, acts.stride, m, pool);
    if (p.prepared != nullptr) {
      MulProducts(ks, std::span<const Product>(&p, 1), acts, m, pool);
    } else {
      shared[n_shared++] = p;
    }
  }
  MulProducts(ks, std::span<const Product>(shared, n_shared), acts, m, pool);
}

void MatMulWith(const KernelSet& ks, const WeightView& w, const float* x, int64_t m, float* y,
                ThreadPool* pool) {
  if (w.n_out <= 0) return;
  const MatMulTarget target{&w, y};
  MatMulSharedWith(ks, std::span<const MatMulTarget>(&target, 1), x, m, pool);
}

}  // namespace kernels

void MatMul(const WeightView& w, const float* x, int64_t m, float* y, ThreadPool* pool) {
  kernels::MatMulWith(kernels::ActiveKernels(), w, x, m, y, pool);
}

void MatMulShared(std::span<const MatMulTarget> targets, const float* x, int64_t m, ThreadPool* pool) {
  kernels::MatMulSharedWith(kernels::ActiveKernels(), targets, x, m, pool);
}

PackedWeightPtr PackWeight(const WeightView& w, const PackReleaseFn& release,
                           std::pmr::memory_resource* memory) {
  const kernels::KernelSet& ks = kernels::ActiveKernels();
  if (ks.pack == nullptr || w.packed != nullptr) return nullptr;
  PackedWeightPtr p(new kernels::PackedWeight(memory != nullptr ? memory : HugePageResource()));
  if (!ks.pack(w, release, p.get())) return nullptr;
  p->kernels = &ks;
  return p;
}

void DequantizeRow(const WeightView& w, int64_t row, float* out) {
  if (w.packed != nullptr) return kernels::DequantizePackedRow(*w.packed, row, w.n_in, out);
  kernels::DequantizeRowRef(w.type, w.data + static_cast<size_t>(row) * w.row_bytes, w.n_in, out);
}

}  // namespace ragd::inference
