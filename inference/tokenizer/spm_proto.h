// Serializes a SentencePiece ModelProto by hand (only sentencepiece_processor.h
// is installed; ModelProto is an opaque type there), so that a vocabulary read
// from a GGUF file can be loaded with LoadFromSerializedProto(). Internal to
// inference/tokenizer.
//
// Wire format written (protobuf, tag = field << 3 | wire type), from
// sentencepiece_model.proto v0.1.97:
//   ModelProto       1: repeated SentencePiece pieces, 2: TrainerSpec,
//                    3: NormalizerSpec
//   SentencePiece    1: string piece, 2: float score (fixed32),
//                    3: enum type (NORMAL 1, UNKNOWN 2, CONTROL 3,
//                       USER_DEFINED 4, UNUSED 5, BYTE 6; the same numbers as
//                       GGUF tokenizer.ggml.token_type)
//   TrainerSpec      3: model_type (UNIGRAM 1, BPE 2), 35: byte_fallback,
//                    40..43: unk/bos/eos/pad id, 45..48: unk/bos/eos/pad piece
//   NormalizerSpec   1: name, 3: add_dummy_prefix, 4: remove_extra_whitespaces,
//                    5: escape_whitespaces (proto2 bools defaulting to true,
//                    so they are always written explicitly); field 2
//                    (precompiled_charsmap) left empty = no normalization.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ragd::inference::spm {

enum class PieceType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct Piece {
  std::string text;  // as SentencePiece should match it in normalized text
  float score = 0;
  PieceType type = PieceType::kNormal;
};

struct ModelSpec {
  std::vector<Piece> pieces;  // in id order
  bool bpe = true;            // BPE; false = unigram
  bool byte_fallback = true;
  bool add_dummy_prefix = false;
  bool remove_extra_whitespaces = false;
  bool escape_whitespaces = true;
  int32_t unk_id = -1, bos_id = -1, eos_id = -1, pad_id = -1;  // -1: not written
};

// The serialized ModelProto.
std::string SerializeModel(const ModelSpec& spec);

}  // namespace ragd::inference::spm
