#include "inference/ggml_types.h"

#include <iterator>

namespace ragd::inference {

const GgmlTypeInfo* GetTypeInfo(uint32_t type) {
  // Indexed by id; entries with an empty name are ids ggml retired or never used.
  static const GgmlTypeInfo kTable[] = {
      {"F32", 1, 4, true},          // 0
      {"F16", 1, 2, true},          // 1
      {"Q4_0", 32, 18, true},       // 2
      {"Q4_1", 32, 20, true},       // 3
      {"", 0, 0, false},            // 4 (removed Q4_2)
      {"", 0, 0, false},            // 5 (removed Q4_3)
      {"Q5_0", 32, 22, true},       // 6
      {"Q5_1", 32, 24, true},       // 7
      {"Q8_0", 32, 34, true},       // 8
      {"Q8_1", 32, 36, false},      // 9
      {"Q2_K", 256, 84, false},     // 10
      {"Q3_K", 256, 110, false},    // 11
      {"Q4_K", 256, 144, true},     // 12
      {"Q5_K", 256, 176, true},     // 13
      {"Q6_K", 256, 210, true},     // 14
      {"Q8_K", 256, 292, false},    // 15
      {"IQ2_XXS", 256, 66, false},  // 16
      {"IQ2_XS", 256, 74, false},   // 17
      {"IQ3_XXS", 256, 98, false},  // 18
      {"IQ1_S", 256, 50, false},    // 19
      {"IQ4_NL", 32, 18, false},    // 20
      {"IQ3_S", 256, 110, false},   // 21
      {"IQ2_S", 256, 82, false},    // 22
      {"IQ4_XS", 256, 136, false},  // 23
      {"I8", 1, 1, false},          // 24
      {"I16", 1, 2, false},         // 25
      {"I32", 1, 4, false},         // 26
      {"I64", 1, 8, false},         // 27
      {"F64", 1, 8, false},         // 28
      {"IQ1_M", 256, 56, false},    // 29
      {"BF16", 1, 2, true},         // 30
  };
  if (type >= sizeof(kTable) / sizeof(kTable[0])) return nullptr;
  const GgmlTypeInfo* info = &kTable[type];
  return info->name.empty() ? nullptr : info;
}

std::string_view FileTypeName(int64_t file_type) {
  // llama_ftype: the ids are fixed by the format; 4-6 and 23+ are not listed
  // here (removed types, or rare ones ragd has no kernels for).
  static constexpr std::string_view kNames[] = {
      "F32",  "F16",    "Q4_0",   "Q4_1",   "",       "",       "",       "Q8_0",   "Q5_0", "Q5_1",
      "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K"};
  if (file_type < 0 || file_type >= static_cast<int64_t>(std::size(kNames))) return "";
  return kNames[file_type];
}

}  // namespace ragd::inference
