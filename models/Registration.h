//===- Registration.h - registers the built-in models ------------*- C++ -*-===//
#ifndef TGC_MODELS_REGISTRATION_H
#define TGC_MODELS_REGISTRATION_H

namespace tgc::models {

/// Registers `transformer` (presets tiny, small, base, big) by name.
void registerBuiltinModels();

} // namespace tgc::models

#endif // TGC_MODELS_REGISTRATION_H
