// Looks up model tensors in a GGUF file and checks their presence, type and
// shape, so that a wrong or truncated model fails on load with an error naming
// the tensor instead of computing garbage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "inference/gguf.h"
#include "inference/kernels/kernels.h"

namespace ragd::inference {

// A 2-D weight of n_out rows of n_in elements (GGUF ne = [n_in, n_out]) in any
// type the kernels can multiply.
Result<WeightView> RequireMatrix(const GgufFile& file, const std::string& name, int64_t n_in, int64_t n_out);

// A 1-D F32 vector of n elements (norm weights).
Result<const float*> RequireVector(const GgufFile& file, const std::string& name, int64_t n);

// A required integer / float metadata key, with a range check.
Result<int64_t> RequireInt(const GgufFile& file, const std::string& key, int64_t min, int64_t max);
Result<double> RequireFloat(const GgufFile& file, const std::string& key);

// The tensors of one block ("blk.<layer>.<suffix>"), checked as they are read
// into the caller's fields.
class LayerTensors {
 public:
  LayerTensors(const GgufFile& file, int layer) : file_(file), layer_(layer) {}
  Status Matrix(std::string_view suffix, int64_t n_in, int64_t n_out, WeightView* out) const;
  Status Vector(std::string_view suffix, int64_t n, const float** out) const;
  // As Vector, but an absent tensor leaves *out null instead of failing.
  Status OptionalVector(std::string_view suffix, int64_t n, const float** out) const;
  bool Has(std::string_view suffix) const;

 private:
  const GgufFile& file_;
  int layer_;
};

}  // namespace ragd::inference
