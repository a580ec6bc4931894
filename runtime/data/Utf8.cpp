//===- Utf8.cpp - checking UTF-8 text ------------------------------------===//
#include "runtime/data/Utf8.h"

#include <cstdio>

namespace tgc::runtime {

std::string checkUtf8(std::string_view text, size_t firstLine) {
  size_t line = firstLine, lineStart = 0;
  for (size_t i = 0; i < text.size();) {
    auto byte = [&](size_t at) {
      return at < text.size() ? static_cast<unsigned char>(text[at]) : 0;
    };
    unsigned char lead = byte(i);
    if (lead == '\n') {
      ++line;
      lineStart = ++i;
      continue;
    }
    if (lead < 0x80) {
      ++i;
      continue;
    }
    // The second byte's range excludes overlong forms (E0, F0), surrogates
    // (ED) and code points past U+10FFFF (F4); C0, C1 and F5-FF never lead.
    unsigned char low = 0x80, high = 0xBF;
    if (lead == 0xE0)
      low = 0xA0;
    else if (lead == 0xED)
      high = 0x9F;
    else if (lead == 0xF0)
      low = 0x90;
    else if (lead == 0xF4)
      high = 0x8F;
    size_t length = utf8SequenceLength(lead);
    bool valid = lead >= 0xC2 && lead <= 0xF4 && byte(i + 1) >= low &&
                 byte(i + 1) <= high;
    for (size_t k = 2; valid && k < length; ++k)
      valid = byte(i + k) >= 0x80 && byte(i + k) <= 0xBF;
    if (!valid) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", lead);
      return std::to_string(line) + ":" + std::to_string(i - lineStart + 1) +
             ": invalid UTF-8 (byte " + hex + ")";
    }
    i += length;
  }
  return {};
}

} // namespace tgc::runtime
