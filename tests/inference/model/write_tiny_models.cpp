// write_tiny_models DIR: writes every tiny Llama-family variant
// (tiny_llama_family.h) as DIR/<name>.gguf and prints one line per file,
// "<name> <path>". scripts/make-tiny-golden runs llama.cpp on them.
#include <cstdio>
#include <string>

#include "tests/inference/model/tiny_llama_family.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  for (const auto& list : {ragd::testing::TinyLlamaVariants(), ragd::testing::TinyLlamaEdgeVariants()}) {
    for (const auto& spec : list) {
      const std::string path = std::string(argv[1]) + "/" + spec.name + ".gguf";
      ragd::testing::WriteTinyLlama(spec, path);
      std::printf("%s %s\n", spec.name.c_str(), path.c_str());
    }
  }
  return 0;
}
