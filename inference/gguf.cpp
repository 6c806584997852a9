#include "inference/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "inference/gguf_names.h"

namespace ragd::inference {
namespace {

constexpr uint32_t kMagic = 0x46554747;   // "GGUF"
constexpr uint64_t kMaxCount = 1u << 24;  // sanity bound on counts read from the file
constexpr uint64_t kMaxNameLength = 64;   // ggml's GGML_MAX_NAME

// Bounds-checked little-endian cursor over the mapped bytes.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  template <typename T>
  bool Read(T* out) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(out, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }

  bool ReadString(std::string* out) {
    uint64_t n = 0;
    if (!Read(&n) || n > remaining()) return false;
    out->assign(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return true;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

size_t ScalarSize(GgufValueType t) {
  switch (t) {
    case GgufValueType::kU8:
    case GgufValueType::kI8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kU16:
    case GgufValueType::kI16:
      return 2;
    case GgufValueType::kU32:
    case GgufValueType::kI32:
    case GgufValueType::kF32:
      return 4;
    case GgufValueType::kU64:
    case GgufValueType::kI64:
    case GgufValueType::kF64:
      return 8;
    default:
      return 0;
  }
}

bool ReadNumber(Reader& r, GgufValueType t, double* out) {
  switch (t) {
#define RAGD_CASE(tag, ctype)      \
  case GgufValueType::tag: {       \
    ctype v;                       \
    if (!r.Read(&v)) return false; \
    *out = static_cast<double>(v); \
    return true;                   \
  }
    RAGD_CASE(kU8, uint8_t)
    RAGD_CASE(kI8, int8_t)
    RAGD_CASE(kU16, uint16_t)
    RAGD_CASE(kI16, int16_t)
    RAGD_CASE(kU32, uint32_t)
    RAGD_CASE(kI32, int32_t)
    RAGD_CASE(kF32, float)
    RAGD_CASE(kU64, uint64_t)
    RAGD_CASE(kI64, int64_t)
    RAGD_CASE(kF64, double)
#undef RAGD_CASE
    case GgufValueType::kBool: {
      uint8_t v;
      if (!r.Read(&v)) return false;
      *out = v != 0;
      return true;
    }
    default:
      return false;
  }
}

bool KnownType(uint32_t t) { return t <= static_cast<uint32_t>(GgufValueType::kF64); }

// Reads one value of type `t`; depth guards against absurd nesting.
Status ReadValue(Reader& r, GgufValueType t, GgufValue* v, const std::string& key, int depth) {
  v->type = t;
  const auto truncated = [&] { return Status::Corrupt("truncated value of key '" + key + "'"); };
  if (t == GgufValueType::kString) return r.ReadString(&v->str) ? Status::Ok() : truncated();
  if (t != GgufValueType::kArray) return ReadNumber(r, t, &v->num) ? Status::Ok() : truncated();

  uint32_t et = 0;
  uint64_t n = 0;
  if (!r.Read(&et) || !r.Read(&n)) return truncated();
  if (!KnownType(et))
    return Status::Corrupt("key '" + key + "' has an array of unknown type " + std::to_string(et));
  if (depth > 4) return Status::Corrupt("key '" + key + "' nests arrays too deeply");
  v->elem_type = static_cast<GgufValueType>(et);
  v->array_size = n;
  // Every element takes at least one byte (strings at least eight).
  if (n > r.remaining()) return truncated();
  if (v->elem_type == GgufValueType::kString) {
    v->strings.resize(n);
    for (uint64_t i = 0; i < n; ++i)
      if (!r.ReadString(&v->strings[i])) return truncated();
  } else if (v->elem_type == GgufValueType::kArray) {
    for (uint64_t i = 0; i < n; ++i) {
      GgufValue nested;
      RAGD_RETURN_IF_ERROR(ReadValue(r, GgufValueType::kArray, &nested, key, depth + 1));
    }
  } else {
    if (n * ScalarSize(v->elem_type) > r.remaining()) return truncated();
    v->numbers.resize(n);
    for (uint64_t i = 0; i < n; ++i) ReadNumber(r, v->elem_type, &v->numbers[i]);
  }
  return Status::Ok();
}

}  // namespace

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufValueType::kF32:
    case GgufValueType::kF64:
    case GgufValueType::kString:
    case GgufValueType::kArray:
      return false;
    default:
      return true;
  }
}

Result<GgufFile> GgufFile::Open(const std::string& path, const GgufOpenOptions& options) {
  auto mapped = MappedFile::Open(path);
  if (!mapped.ok()) return mapped.status();
  GgufFile f;
  f.file_ = std::move(mapped).value();
  Reader r(f.file_.data(), f.file_.size());
  const auto corrupt = [&](const std::string& what) { return Status::Corrupt(path + ": " + what); };

  uint32_t magic = 0;
  uint64_t n_tensors = 0, n_kv = 0;
  if (!r.Read(&magic)) return corrupt("file too short for a GGUF header");
  if (magic != kMagic) return corrupt("not a GGUF file (bad magic)");
  if (!r.Read(&f.version_) || !r.Read(&n_tensors) || !r.Read(&n_kv)) return corrupt("truncated GGUF header");
  if (f.version_ < 2 || f.version_ > 3)
    return corrupt("unsupported GGUF version " + std::to_string(f.version_));
  if (n_tensors > kMaxCount || n_kv > kMaxCount) return corrupt("implausible tensor or key count");

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key;
    uint32_t type = 0;
    if (!r.ReadString(&key) || !r.Read(&type)) return corrupt("truncated metadata");
    if (!KnownType(type)) return corrupt("key '" + key + "' has unknown type " + std::to_string(type));
    GgufValue v;
    Status st = ReadValue(r, static_cast<GgufValueType>(type), &v, key, 0);
    if (!st.ok()) return corrupt(st.message());
    f.kv_[key] = std::move(v);
  }

  if (auto a = f.GetInt(std::string(keys::kAlignment))) {
    if (*a <= 0 || *a > (1 << 20) || (*a & (*a - 1)) != 0)
      return corrupt("general.alignment is not a power of two");
    f.alignment_ = static_cast<uint32_t>(*a);
  }

  // Each tensor-table entry takes at least 33 bytes (a one-byte name, one
  // dimension): a count the rest of the file cannot hold is refused before
  // anything is allocated for it (2^24 entries would be 2 GiB).
  constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;
  if (n_tensors > r.remaining() / kMinTensorInfoBytes) return corrupt("truncated tensor table");
  f.tensors_.resize(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensor& t = f.tensors_[i];
    uint32_t type = 0;
    if (!r.ReadString(&t.name) || !r.Read(&t.n_dims)) return corrupt("truncated tensor table");
    if (t.name.empty() || t.name.size() > kMaxNameLength)
      return corrupt("bad tensor name at index " + std::to_string(i));
    if (t.n_dims < 1 || t.n_dims > 4)
      return corrupt("tensor '" + t.name + "' has " + std::to_string(t.n_dims) + " dimensions");
    for (uint32_t d = 0; d < t.n_dims; ++d)
      if (!r.Read(&t.ne[d])) return corrupt("truncated tensor table");
    if (!r.Read(&type) || !r.Read(&t.offset)) return corrupt("truncated tensor table");
    t.info = GetTypeInfo(type);
    if (t.info == nullptr)
      return corrupt("tensor '" + t.name + "' has unknown type id " + std::to_string(type));
    t.type = static_cast<GgmlType>(type);
    if (options.require_supported_types && !t.info->supported)
      return Status::Unsupported(path + ": tensor '" + t.name + "' has type " + std::string(t.info->name) +
                                 ", which the engine does not support");
    uint64_t n = 1;
    for (int d = 0; d < 4; ++d) {
      if (t.ne[d] == 0 || t.ne[d] > (uint64_t{1} << 40) || n > std::numeric_limits<uint64_t>::max() / t.ne[d])
        return corrupt("tensor '" + t.name + "' has an invalid shape");
      n *= t.ne[d];
    }
    if (n > (uint64_t{1} << 40)) return corrupt("tensor '" + t.name + "' is implausibly large");
    if (t.ne[0] % t.info->block_size != 0)
      return corrupt("tensor '" + t.name + "' row length is not a multiple of its block size");
    t.n_bytes = t.row_bytes() * t.n_rows();
    if (t.offset % f.alignment_ != 0) return corrupt("tensor '" + t.name + "' is misaligned");
    if (!f.tensor_index_.emplace(t.name, i).second) return corrupt("duplicate tensor '" + t.name + "'");
  }

  const size_t data_start = (r.pos() + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  if (data_start > f.file_.size() && n_tensors > 0) return corrupt("truncated before tensor data");
  f.data_start_ = data_start;
  for (GgufTensor& t : f.tensors_) {
    if (t.offset > f.file_.size() || t.n_bytes > f.file_.size() - data_start ||
        data_start + t.offset > f.file_.size() - t.n_bytes)
      return corrupt("tensor '" + t.name + "' extends past the end of the file");
    t.data = f.file_.data() + data_start + t.offset;
  }
  return f;
}

const GgufValue* GgufFile::Find(const std::string& key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

const GgufTensor* GgufFile::FindTensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::optional<int64_t> GgufFile::GetInt(const std::string& key) const {
  const GgufValue* v = Find(key);
  // A u64 from 2^63 up has no int64 value (converting it is undefined).
  if (v == nullptr || !v->is_integer() || !(v->num < 0x1p63)) return std::nullopt;
  return static_cast<int64_t>(v->num);
}

std::optional<double> GgufFile::GetFloat(const std::string& key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr || v->type == GgufValueType::kString || v->type == GgufValueType::kArray)
    return std::nullopt;
  return v->num;
}

std::optional<std::string> GgufFile::GetString(const std::string& key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr || v->type != GgufValueType::kString) return std::nullopt;
  return v->str;
}

void GgufFile::ReleaseMetadata() {
  for (auto& [key, value] : kv_) {
    std::vector<std::string>().swap(value.strings);
    std::vector<double>().swap(value.numbers);
  }
  file_.DropPages(0, std::min(data_start_, file_.size()));
}

void GgufFile::DropData(const uint8_t* begin, const uint8_t* end) const {
  if (begin < file_.data() || end <= begin) return;
  file_.DropPages(static_cast<size_t>(begin - file_.data()), static_cast<size_t>(end - begin));
}

std::string GgufFile::architecture() const {
  return GetString(std::string(keys::kArchitecture)).value_or("");
}

}  // namespace ragd::inference
