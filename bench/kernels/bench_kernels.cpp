// MatMul throughput on the shapes of Gemma 3 270M (Q4_K_M file types), for
// decode (m = 1) and prefill (m = 512), 1 and 2 threads, next to OpenBLAS
// sgemm on the same shapes with float weights.
//
// With the real model file present it also times every matrix product of one
// decoded token (all 18 layers + the tied output, weights streamed from
// memory) and of a 512-token prefill (output for the last token only); the
// weights are packed as the model packs them (kernels.h PackWeight).
//
// With --batch it instead times one decode step's products for batches of
// m = 1..16 rows (2 threads), per weight type of the model and for the tied
// output: what each extra row of a batched decode step costs.
//
// With --attention it instead times the half-precision attention arithmetic
// (f16_attention.h) of one query token on Gemma 3 270M's shape (4 query heads
// sharing one kv head of 256 values) for 512 visible keys (a sliding layer)
// and 900 and 2048 (a global one), with the key and value rows cold (each
// repetition reads another of 64 caches' worth, 128 MiB in all, beyond the
// last-level cache, as a decode step finds them) and warm (the same rows
// again), one thread.
//
// With --peak it instead measures what one core issues per second of the
// instructions the x86 kernels are built from (peak_rates.h): the limits the
// figures above are read against.
//
// usage: bench_kernels [--kernels NAME] [--quick] [--model PATH] [--model-only] [--batch] [--attention]
//                      [--peak]
//   --kernels NAME  run a given kernel set (scalar, avx2, avx512vnni)
//   --quick         fewer repetitions
//   --model PATH    GGUF file (default $RAGD_MODELS or ~/.cache/ragd/models,
//                   gemma-3-270m-q4_k_m.gguf)
//   --model-only    skip the synthetic shapes
//   --batch         the batch-size curve of the model's products only
//   --attention     the attention kernels only
//   --peak          the per-core instruction rates only
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_paths.h"
#include "bench/kernels/peak_rates.h"
#include "inference/gguf.h"
#include "inference/kernels/f16_attention.h"
#include "inference/kernels/kernel_set.h"

using namespace ragd::inference;

namespace {

struct Shape {
  const char* what;
  int64_t n_in, n_out;
  GgmlType type;
};

std::vector<uint8_t> RandomWeights(GgmlType type, int64_t n_in, int64_t n_out) {
  const GgmlTypeInfo& info = *GetTypeInfo(static_cast<uint32_t>(type));
  std::vector<uint8_t> data(RowBytes(info, n_in) * n_out);
  std::mt19937 rng(1);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  // Finite scales: overwrite every block's f16 fields with 0.01.
  const uint16_t h = kernels::FloatToHalf(0.01f);
  std::vector<int> offs;
  if (type == GgmlType::kQ6_K)
    offs = {208};
  else if (type == GgmlType::kQ4_K || type == GgmlType::kQ5_K || type == GgmlType::kQ4_1 ||
           type == GgmlType::kQ5_1)
    offs = {0, 2};
  else
    offs = {0};
  for (size_t b = 0; b < data.size() / info.type_size; ++b)
    for (int o : offs) std::memcpy(data.data() + b * info.type_size + o, &h, 2);
  return data;
}

double Seconds(const std::function<void()>& fn, int reps) {
  fn();  // warm-up
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// A model tensor as a MatMul weight.
WeightView ViewOf(const GgufTensor& g) {
  return {g.type, g.data, static_cast<int64_t>(g.ne[0]), static_cast<int64_t>(g.ne[1]), g.row_bytes()};
}

// Model tensors as MatMul weights, packed as the model packs them
// (PackWeight: for the active kernel set; the others read the blocks).
class PackedViews {
 public:
  WeightView Of(const GgufTensor& g) {
    WeightView w = ViewOf(g);
    if (PackedWeightPtr p = PackWeight(w)) {
      w.packed = p.get();
      packed_.push_back(std::move(p));
    }
    return w;
  }

 private:
  std::vector<PackedWeightPtr> packed_;
};

// fn(layer, name, tensor) for every 2-D weight of every layer, in forward order.
template <typename Fn>
void ForEachLayerWeight(const GgufFile& file, Fn&& fn) {
  for (int l = 0;; ++l) {
    bool any = false;
    for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
      const GgufTensor* g = file.FindTensor("blk." + std::to_string(l) + "." + t + ".weight");
      if (g == nullptr) continue;
      any = true;
      fn(l, t, *g);
    }
    if (!any) return;
  }
}

// Every 2-D weight of the model in forward order, plus the tied output.
void BenchModel(const std::string& path, const kernels::KernelSet& ks, bool quick) {
  auto file = GgufFile::Open(path);
  if (!file.ok()) {
    std::printf("model: %s (%s), skipped\n", path.c_str(), file.status().ToString().c_str());
    return;
  }
  PackedViews views;
  std::vector<WeightView> layers;
  size_t layer_bytes = 0;
  ForEachLayerWeight(*file, [&](int layer, const char* name, const GgufTensor& g) {
    layers.push_back(views.Of(g));
    layer_bytes += g.n_bytes;
    if (layer == 0)
      std::printf("  %s: %s %lldx%lld\n", name, g.info->name.data(), (long long)g.ne[0], (long long)g.ne[1]);
  });
  const GgufTensor* out = file.value().FindTensor("token_embd.weight");
  const WeightView wout = views.Of(*out);
  std::vector<float> x(2048 * 512), y(262144);
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  for (auto& v : x) v = nd(rng);
  std::vector<float> ybig(2048 * 512);
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    double flop = 0;
    for (const auto& w : layers) flop += 2.0 * w.n_in * w.n_out;
    const double out_flop = 2.0 * wout.n_in * wout.n_out;
    const double t_dec = Seconds(
        [&] {
          for (const auto& w : layers) kernels::MatMulWith(ks, w, x.data(), 1, ybig.data(), &pool);
          kernels::MatMulWith(ks, wout, x.data(), 1, y.data(), &pool);
        },
        quick ? 2 : 5);
    const double bytes = static_cast<double>(layer_bytes + out->n_bytes);
    std::printf("decode  1 token   thr %d: %8.2f ms  %6.1f tok/s  %6.2f GB/s  %6.1f GFLOP/s\n", threads,
                t_dec * 1e3, 1.0 / t_dec, bytes / t_dec * 1e-9, (flop + out_flop) / t_dec * 1e-9);
    const int64_t m = 512;
    const double t_pre = Seconds(
        [&] {
          for (const auto& w : layers) kernels::MatMulWith(ks, w, x.data(), m, ybig.data(), &pool);
          kernels::MatMulWith(ks, wout, x.data(), 1, y.data(), &pool);
        },
        quick ? 1 : 2);
    std::printf("prefill %lld tokens thr %d: %8.2f ms  %6.1f tok/s  %6.1f GFLOP/s (matmuls only)\n",
                (long long)m, threads, t_pre * 1e3, m / t_pre, (flop * m + out_flop) / t_pre * 1e-9);
  }
}

// One decode step's products for m = 1..16 rows, grouped by weight type (all
// layers) plus the output: ms per step and ms per extra row.
void BenchBatch(const std::string& path, const kernels::KernelSet& ks, bool quick) {
  auto file = GgufFile::Open(path);
  if (!file.ok()) {
    std::printf("model: %s (%s)\n", path.c_str(), file.status().ToString().c_str());
    return;
  }
  struct Group {
    std::string name;
    std::vector<WeightView> weights;
  };
  std::vector<Group> groups;
  PackedViews views;
  auto add = [&](const std::string& name, const GgufTensor& g) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& gr) { return gr.name == name; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{name, {}});
    it->weights.push_back(views.Of(g));
  };
  ForEachLayerWeight(*file, [&](int, const char*, const GgufTensor& g) {
    add(std::string("layers ") + g.info->name.data(), g);
  });
  add("output", *file.value().FindTensor("token_embd.weight"));
  groups.back().weights.back().order = SumOrder::kBlockSums;  // as the model multiplies it
  const int64_t ms[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
  std::vector<float> x(2048 * 32), y(262144 * 32);
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  for (auto& v : x) v = nd(rng);
  ThreadPool pool(2);
  std::printf("decode-step products by batch rows m (2 threads): ms per step [ms per row beyond m=1]\n");
  std::printf("%-14s", "weights");
  for (int64_t m : ms) std::printf(" %14lld", static_cast<long long>(m));
  std::printf("\n");
  for (const Group& g : groups) {
    std::printf("%-14s", g.name.c_str());
    double t1 = 0;
    for (int64_t m : ms) {
      const double t = Seconds(
          [&] {
            for (const auto& w : g.weights) kernels::MatMulWith(ks, w, x.data(), m, y.data(), &pool);
          },
          quick ? 3 : 8);
      if (m == 1) t1 = t;
      if (m == 1)
        std::printf(" %7.2f        ", t * 1e3);
      else
        std::printf(" %7.2f [%4.2f]", t * 1e3, (t - t1) * 1e3 / (m - 1));
    }
    std::printf("\n");
  }
}

// One query token's attention arithmetic, per visible key count: the four
// heads' scores (DotRowsF16Order), and their weighted value sums
// (WeightedRowSumF16Order) as they are and after streaming the rows in
// (StreamRowsF16, as the model does for a step's first token), over whole
// rows and, as the decode path splits a lone token's sum over two threads, in
// 64- and 128-value cuts (each cut streams its own part of the rows).
void BenchAttention(bool quick) {
  constexpr int64_t kHeadDim = 256, kHeads = 4, kSlots = 2048, kCaches = 64;
  const int reps = quick ? 64 : 256;
  // Per cache: kSlots key rows, then kSlots value rows, halves in [0.125, 0.25).
  std::vector<uint16_t> rows(static_cast<size_t>(kCaches) * 2 * kSlots * kHeadDim);
  std::mt19937 rng(3);
  for (auto& h : rows) h = static_cast<uint16_t>(0x3000 + (rng() & 0x3ff));
  std::vector<float> q(kHeads * kHeadDim), out(kHeads * kHeadDim);
  for (auto& x : q) x = static_cast<float>(rng() % 1000) / 1000.0f;
  const float* qs[kHeads];
  float* outs[kHeads];
  for (int g = 0; g < kHeads; ++g) {
    qs[g] = q.data() + g * kHeadDim;
    outs[g] = out.data() + g * kHeadDim;
  }
  std::printf(
      "attention, one query token: 4 heads x 256 values against one kv head, halves, 1 thread\n"
      "(us per call, median of %d; GB/s = key or value bytes / time; cold: another of %lld caches each "
      "time, %.0f MiB in all)\n",
      reps, static_cast<long long>(kCaches), rows.size() * 2 / 1048576.0);
  const char* heads[] = {"scores",      "weighted sum",   "streamed + sum", "64-value cuts",
                         "64 streamed", "128-value cuts", "128 streamed"};
  constexpr int kColumns = 7;
  std::printf("%5s %-4s", "keys", "");
  for (const char* h : heads) std::printf(" | %19s", h);
  std::printf("\n");
  int64_t call = 0;  // which cache a cold call reads
  for (const int64_t n_keys : {int64_t{512}, int64_t{900}, int64_t{2048}}) {
    std::vector<float> w(kHeads * n_keys), scores(kHeads * n_keys);
    for (auto& x : w) x = static_cast<float>(rng() % 1000) / 1e6f;
    std::vector<const uint16_t*> keys(n_keys), values(n_keys);
    for (const bool cold : {true, false}) {
      std::vector<double> t[kColumns];
      // Points keys and values at a cache's rows, value columns from d0.
      auto point = [&](int64_t d0) {
        const size_t c = cold ? static_cast<size_t>(call++ % kCaches) : 0;
        for (int64_t j = 0; j < n_keys; ++j) {
          keys[j] = rows.data() + (c * 2 * kSlots + j) * kHeadDim;
          values[j] = rows.data() + (c * 2 * kSlots + kSlots + j) * kHeadDim + d0;
        }
      };
      auto sum = [&](int64_t width, bool stream) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int64_t d0 = 0; d0 < kHeadDim; d0 += width) {
          if (d0 > 0 || width < kHeadDim) point(d0);  // each cut as another thread would find it
          if (stream) StreamRowsF16(values.data(), n_keys, width);
          float* o[kHeads];
          for (int g = 0; g < kHeads; ++g) o[g] = outs[g] + d0;
          WeightedRowSumF16Order(w.data(), kHeads, values.data(), n_keys, 7, width, o);
        }
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      };
      for (int r = 0; r < reps + 1; ++r) {
        double us[kColumns];
        point(0);
        const auto t0 = std::chrono::steady_clock::now();
        DotRowsF16Order(qs, kHeads, keys.data(), n_keys, kHeadDim, scores.data());
        us[0] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        point(0);
        us[1] = sum(kHeadDim, false);
        point(0);
        us[2] = sum(kHeadDim, true);
        us[3] = sum(64, false);
        us[4] = sum(64, true);
        us[5] = sum(128, false);
        us[6] = sum(128, true);
        if (r == 0) continue;  // warm-up
        for (int k = 0; k < kColumns; ++k) t[k].push_back(us[k]);
      }
      const double bytes = static_cast<double>(n_keys * kHeadDim * 2);
      std::printf("%5lld %-4s", static_cast<long long>(n_keys), cold ? "cold" : "warm");
      for (auto& v : t) {
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        const double us = v[v.size() / 2];
        std::printf(" | %6.1f us %4.1f GB/s", us, bytes / us / 1e3);
      }
      std::printf("\n");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const kernels::KernelSet* ks = &kernels::ActiveKernels();
  bool quick = false, model_only = false, batch = false, attention = false, peak = false;
  std::string model = ragd::bench::GemmaModelPath();
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--model-only") == 0) model_only = true;
    if (std::strcmp(argv[i], "--batch") == 0) batch = true;
    if (std::strcmp(argv[i], "--attention") == 0) attention = true;
    if (std::strcmp(argv[i], "--peak") == 0) peak = true;
    if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc) model = argv[i + 1];
    if (std::strcmp(argv[i], "--kernels") == 0 && i + 1 < argc) {
      const kernels::KernelSet* sets[4];
      const int n = kernels::SupportedKernelSets(sets, 4);
      for (int k = 0; k < n; ++k)
        if (std::strcmp(sets[k]->name, argv[i + 1]) == 0) ks = sets[k];
    }
  }
  std::printf("cores: %u  kernels: %s  %s\n", std::thread::hardware_concurrency(), ks->name,
              openblas_get_config());
  if (peak) {
    ragd::bench::BenchPeakRates(quick);
    return 0;
  }
  if (attention) {
    BenchAttention(quick);
    return 0;
  }
  if (batch) {
    BenchBatch(model, *ks, quick);
    return 0;
  }
  BenchModel(model, *ks, quick);
  if (model_only) return 0;
  const Shape shapes[] = {
      {"attn_q", 640, 1024, GgmlType::kQ5_0},   {"ffn_up", 640, 2048, GgmlType::kQ5_0},
      {"ffn_down", 2048, 640, GgmlType::kQ6_K}, {"ffn_down", 2048, 640, GgmlType::kQ4_K},
      {"attn_out", 1024, 640, GgmlType::kQ4_K}, {"output", 640, 262144, GgmlType::kQ8_0},
  };
  std::printf(
      "synthetic shapes (random weights; GB/s = weight bytes / time, cache-resident except 'output'):\n");
  std::printf("%-9s %6s %7s %-5s %5s %3s %10s %9s %8s | %-12s %9s\n", "tensor", "n_in", "n_out", "type", "m",
              "thr", "time_ms", "GFLOP/s", "GB/s", "sgemm_ms", "GFLOP/s");
  for (const Shape& s : shapes) {
    const auto w_data = RandomWeights(s.type, s.n_in, s.n_out);
    const WeightView w{s.type, w_data.data(), s.n_in, s.n_out,
                       RowBytes(*GetTypeInfo(static_cast<uint32_t>(s.type)), s.n_in)};
    std::vector<float> w_f32;
    for (int64_t m : {int64_t{1}, int64_t{512}}) {
      std::vector<float> x(s.n_in * m), y(s.n_out * m);
      std::mt19937 rng(2);
      std::normal_distribution<float> nd;
      for (auto& v : x) v = nd(rng);
      const double flop = 2.0 * m * s.n_in * s.n_out;
      for (int threads : {1, 2}) {
        ThreadPool pool(threads);
        const int reps = quick ? 2 : (m == 1 ? 20 : 3);
        const double t = Seconds([&] { kernels::MatMulWith(*ks, w, x.data(), m, y.data(), &pool); }, reps);
        std::printf("%-9s %6lld %7lld %-5s %5lld %3d %10.3f %9.1f %8.2f |", s.what, (long long)s.n_in,
                    (long long)s.n_out, GetTypeInfo(static_cast<uint32_t>(s.type))->name.data(), (long long)m,
                    threads, t * 1e3, flop / t * 1e-9, w_data.size() / t * 1e-9);
        // OpenBLAS on float weights (4 bytes per weight), same thread count.
        const bool huge = s.n_out > 100000 && m > 1;
        if (huge && quick) {
          std::printf(" %-12s\n", "skipped");
          continue;
        }
        if (w_f32.empty()) {
          w_f32.resize(s.n_in * s.n_out);
          for (int64_t r = 0; r < s.n_out; ++r) DequantizeRow(w, r, w_f32.data() + r * s.n_in);
        }
        openblas_set_num_threads(threads);
        const double tb = Seconds(
            [&] {
              cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, s.n_out, s.n_in, 1.0f, x.data(), s.n_in,
                          w_f32.data(), s.n_in, 0.0f, y.data(), s.n_out);
            },
            quick ? 1 : reps);
        std::printf(" %-12.3f %9.1f\n", tb * 1e3, flop / tb * 1e-9);
      }
    }
  }
  return 0;
}
