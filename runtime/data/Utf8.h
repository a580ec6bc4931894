//===- Utf8.h - checking UTF-8 text -----------------------------*- C++ -*-===//
//
// What tgc-data and the training programs (prompts and sources given to
// --generate and --translate) check text with before SentencePiece reads it.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_DATA_UTF8_H
#define TGC_RUNTIME_DATA_UTF8_H

#include <cstddef>
#include <string>
#include <string_view>

namespace tgc::runtime {

/// Bytes in the UTF-8 sequence that `lead` starts (1 for a stray byte, which
/// valid input never has).
inline size_t utf8SequenceLength(unsigned char lead) {
  return lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
}

/// An empty string if `text` is valid UTF-8 (no overlong forms, surrogates
/// or code points past U+10FFFF), else "line:column: invalid UTF-8 (byte
/// 0xNN)" for the first bad byte; lines split at '\n' and count from
/// `firstLine`, columns count bytes from 1.
std::string checkUtf8(std::string_view text, size_t firstLine = 1);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_DATA_UTF8_H
