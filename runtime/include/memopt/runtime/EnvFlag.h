//===- EnvFlag.h - on/off switches read from the environment ----*- C++ -*-===//
//
// The CUDA backend's switches that an embedding program sets in its
// environment (MEMOPT_CUDA_TF32, MEMOPT_CUDA_GRAPHS, MEMOPT_CUDNN_LOG) are
// read through one function, so that each takes the same values and a
// mistyped one is an error rather than a silent default.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_ENVFLAG_H
#define MEMOPT_RUNTIME_ENVFLAG_H

namespace memopt::runtime {

/// The switch `name`: `fallback` when it is unset, true for "1", false for
/// "0". Any other value throws Error(InvalidArgument) naming the variable
/// and the value.
bool envFlag(const char *name, bool fallback);

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_ENVFLAG_H
