#include "app/cli/model_info.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "inference/gguf.h"
#include "inference/gguf_names.h"
#include "retrieval/blas_core.h"
#include "retrieval/safetensors.h"

namespace ragd::app {
namespace {

using inference::ArchKey;
namespace keys = inference::keys;

std::string HumanBytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

struct TypeStats {
  int tensors = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;
};

void PrintHistogram(std::ostringstream& out, const std::map<std::string, TypeStats>& hist) {
  out << "tensor types:\n";
  for (const auto& [name, s] : hist) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-6s %4d tensors  %12llu elements  %10s\n", name.c_str(), s.tensors,
                  static_cast<unsigned long long>(s.elements),
                  HumanBytes(static_cast<double>(s.bytes)).c_str());
    out << line;
  }
}

Result<std::string> DescribeGguf(const std::string& path) {
  inference::GgufOpenOptions opts;
  opts.require_supported_types = false;
  auto file = inference::GgufFile::Open(path, opts);
  if (!file.ok()) return file.status();
  const inference::GgufFile& f = *file;
  const std::string arch = f.architecture();
  const auto num = [&](std::string_view suffix) {
    auto v = f.GetFloat(ArchKey(arch, suffix));
    if (!v) return std::string("-");
    std::ostringstream s;
    s << *v;
    return s.str();
  };

  std::ostringstream out;
  out << "file:            " << path << " (" << HumanBytes(static_cast<double>(f.file_size())) << ", "
      << f.file_size() << " bytes)\n";
  out << "format:          GGUF v" << f.version() << ", " << f.metadata().size() << " metadata keys, "
      << f.tensors().size() << " tensors, alignment " << f.alignment() << "\n";
  out << "architecture:    " << (arch.empty() ? "-" : arch) << "\n";
  if (auto name = f.GetString(std::string(keys::kName))) out << "name:            " << *name << "\n";
  out << "context length:  " << num(keys::kContextLength) << "\n";
  out << "embedding:       " << num(keys::kEmbeddingLength) << "\n";
  out << "blocks:          " << num(keys::kBlockCount) << "\n";
  out << "feed-forward:    " << num(keys::kFeedForwardLength) << "\n";
  out << "heads:           " << num(keys::kHeadCount) << " (kv " << num(keys::kHeadCountKv) << ", key length "
      << num(keys::kKeyLength) << ")\n";
  out << "sliding window:  " << num(keys::kSlidingWindow) << "\n";
  out << "rope base:       " << num(keys::kRopeFreqBase) << "\n";
  const inference::GgufValue* tokens = f.Find(std::string(keys::kTokTokens));
  out << "vocabulary:      " << (tokens != nullptr ? std::to_string(tokens->array_size) : std::string("-"));
  if (auto model = f.GetString(std::string(keys::kTokModel))) out << " (" << *model << ")";
  out << "\n";

  std::map<std::string, TypeStats> hist;
  uint64_t params = 0;
  for (const inference::GgufTensor& t : f.tensors()) {
    TypeStats& s = hist[std::string(t.info->name)];
    ++s.tensors;
    s.elements += t.n_elements();
    s.bytes += t.n_bytes;
    params += t.n_elements();
  }
  out << "parameters:      " << params << "\n";
  PrintHistogram(out, hist);
  return out.str();
}

Result<std::string> DescribeSafetensors(const std::string& path) {
  auto file = retrieval::SafetensorsFile::Open(path);
  if (!file.ok()) return file.status();
  std::ostringstream out;
  out << "file:            " << path << " (" << HumanBytes(static_cast<double>(file->file_size())) << ", "
      << file->file_size() << " bytes)\n";
  out << "format:          safetensors, " << file->tensors().size() << " tensors\n";
  // A Hugging Face model folder keeps the architecture in config.json beside the weights.
  const std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  std::ifstream cfg(dir + "/config.json");
  if (cfg) {
    auto j = nlohmann::json::parse(cfg, nullptr, false);
    if (j.is_object()) {
      const auto field = [&](const char* k) { return j.contains(k) ? j[k].dump() : std::string("-"); };
      out << "architecture:    "
          << (j.contains("architectures") ? j["architectures"].dump() : field("model_type")) << "\n";
      out << "context length:  " << field("max_position_embeddings") << "\n";
      out << "embedding:       " << field("hidden_size") << "\n";
      out << "blocks:          " << field("num_hidden_layers") << "\n";
      out << "heads:           " << field("num_attention_heads") << "\n";
      out << "vocabulary:      " << field("vocab_size") << "\n";
    }
  }
  std::map<std::string, TypeStats> hist;
  uint64_t params = 0;
  for (const auto& [name, t] : file->tensors()) {
    TypeStats& s = hist[t.dtype];
    ++s.tensors;
    s.elements += t.n_elements();
    s.bytes += t.n_bytes;
    params += t.n_elements();
  }
  out << "parameters:      " << params << "\n";
  out << "products:        OpenBLAS, " << retrieval::BlasCoreName() << " kernels\n";
  PrintHistogram(out, hist);
  return out.str();
}

}  // namespace

Result<std::string> DescribeModelFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open");
  char magic[4] = {};
  in.read(magic, 4);
  if (in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0) return DescribeGguf(path);
  if (path.size() >= 12 && path.ends_with(".safetensors")) return DescribeSafetensors(path);
  if (path.ends_with(".gguf")) return DescribeGguf(path);  // reports the bad magic
  return Status::InvalidArgument(path + ": not a GGUF or .safetensors file");
}

}  // namespace ragd::app
