//===- ProtoWire.h - length-delimited fields of a protobuf message -*- C++ -*-===//
//
// Reads a serialized protobuf message's wire format without its schema: a
// SentencePiece model's ModelProto is not in SentencePiece's installed
// headers, and the training programs, which read its pieces, cannot link
// SentencePiece beside the Protobuf their checkpoints use.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_DATA_PROTOWIRE_H
#define TGC_RUNTIME_DATA_PROTOWIRE_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tgc::runtime {

/// Reads a varint from the front of `in`; false when it is cut short.
inline bool readVarint(std::string_view &in, uint64_t &value) {
  value = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    auto byte = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

/// Calls `field(number, bytes)` for each length-delimited field of the
/// protobuf message `in` and skips the others; false when it is malformed.
template <typename Field>
bool forEachBytesField(std::string_view in, Field field) {
  while (!in.empty()) {
    uint64_t key = 0, value = 0;
    if (!readVarint(in, key))
      return false;
    switch (key & 7) {
    case 0:
      if (!readVarint(in, value))
        return false;
      break;
    case 1:
    case 5: {
      size_t width = (key & 7) == 1 ? 8 : 4;
      if (in.size() < width)
        return false;
      in.remove_prefix(width);
      break;
    }
    case 2:
      if (!readVarint(in, value) || value > in.size())
        return false;
      field(key >> 3, in.substr(0, value));
      in.remove_prefix(value);
      break;
    default:
      return false;
    }
  }
  return true;
}

} // namespace tgc::runtime

#endif // TGC_RUNTIME_DATA_PROTOWIRE_H
