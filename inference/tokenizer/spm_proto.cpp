#include "inference/tokenizer/spm_proto.h"

#include <cstring>

namespace ragd::inference::spm {
namespace {

constexpr uint32_t kVarint = 0, kFixed32 = 5, kLengthDelimited = 2;

void Varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void Tag(std::string& out, uint32_t field, uint32_t wire_type) { Varint(out, (field << 3) | wire_type); }

void VarintField(std::string& out, uint32_t field, uint64_t v) {
  Tag(out, field, kVarint);
  Varint(out, v);
}

void BytesField(std::string& out, uint32_t field, const std::string& bytes) {
  Tag(out, field, kLengthDelimited);
  Varint(out, bytes.size());
  out += bytes;
}

void FloatField(std::string& out, uint32_t field, float f) {
  Tag(out, field, kFixed32);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

}  // namespace

std::string SerializeModel(const ModelSpec& spec) {
  std::string out;
  std::string msg;
  for (const Piece& p : spec.pieces) {
    msg.clear();
    BytesField(msg, 1, p.text);
    FloatField(msg, 2, p.score);
    VarintField(msg, 3, static_cast<uint64_t>(p.type));
    BytesField(out, 1, msg);
  }

  std::string trainer;
  VarintField(trainer, 3, spec.bpe ? 2 : 1);
  VarintField(trainer, 35, spec.byte_fallback ? 1 : 0);
  const struct {
    uint32_t id_field, piece_field;
    int32_t id;
  } specials[] = {{40, 45, spec.unk_id}, {41, 46, spec.bos_id}, {42, 47, spec.eos_id}, {43, 48, spec.pad_id}};
  for (const auto& s : specials) {
    if (s.id < 0 || static_cast<size_t>(s.id) >= spec.pieces.size()) continue;
    VarintField(trainer, s.id_field, static_cast<uint64_t>(s.id));
    BytesField(trainer, s.piece_field, spec.pieces[s.id].text);
  }
  BytesField(out, 2, trainer);

  std::string normalizer;
  BytesField(normalizer, 1, "identity");
  VarintField(normalizer, 3, spec.add_dummy_prefix ? 1 : 0);
  VarintField(normalizer, 4, spec.remove_extra_whitespaces ? 1 : 0);
  VarintField(normalizer, 5, spec.escape_whitespaces ? 1 : 0);
  BytesField(out, 3, normalizer);
  return out;
}

}  // namespace ragd::inference::spm
