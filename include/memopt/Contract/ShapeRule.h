//===- ShapeRule.h - what every shared shape rule is made of ----*- C++ -*-===//
//
// Part of the compiler-runtime contract (include/memopt/Contract), MLIR-free:
// the C++ standard library only. An op's shape rule, the arithmetic that
// relates its operands' shapes and attributes to its results' shapes, is
// written once, as a function over `Dims` in one of the *Shapes.h headers
// next to this one. The dialect's inferReturnTypes and verifiers and the
// runtime's plan loader (runtime/lib/KernelRules*.cpp) both call it: the
// compiler wraps its message in a diagnostic at the op, the runtime in a
// `plan: steps[i] (kernel): ` error. Each side keeps only what is its own:
// reading operands, attributes and element types, and checking ranks.
//
// A rule returns a `ShapeProblem`: empty when the shapes fit, otherwise the
// message, in the words both sides print.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_CONTRACT_SHAPERULE_H
#define MEMOPT_CONTRACT_SHAPERULE_H

#include <array>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace memopt::shapes {

/// A static shape.
using Dims = std::vector<int64_t>;

/// What is wrong with the shapes; empty when nothing is.
using ShapeProblem = std::string;

/// "8x64x56x56"; "scalar" for rank 0.
inline std::string formatDims(const Dims &dims) {
  if (dims.empty())
    return "scalar";
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += 'x';
    s += std::to_string(dims[i]);
  }
  return s;
}

namespace detail {
inline void append(std::ostringstream &os, const Dims &dims) {
  os << '[';
  for (size_t i = 0; i < dims.size(); ++i)
    os << (i ? ", " : "") << dims[i];
  os << ']';
}
template <size_t N>
inline void append(std::ostringstream &os, const std::array<int64_t, N> &v) {
  append(os, Dims(v.begin(), v.end()));
}
template <typename T>
inline void append(std::ostringstream &os, const T &value) {
  os << value;
}
} // namespace detail

/// The message of a problem: its pieces in order (integer lists as
/// `[1, 2]`; a shape is formatted with formatDims by the caller).
template <typename... Args> ShapeProblem problem(const Args &...pieces) {
  std::ostringstream os;
  (detail::append(os, pieces), ...);
  return os.str();
}

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
inline std::optional<int64_t> checkedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// A possibly negative `axis` (attribute `name`) of a shape of rank `rank`,
/// normalised into [0, rank) in `normalised`.
inline ShapeProblem normaliseAxis(int64_t axis, int64_t rank, const char *name,
                                  int64_t &normalised) {
  normalised = axis < 0 ? axis + rank : axis;
  if (axis < -rank || axis >= rank)
    return problem("expected '", name, "' in [", -rank, ", ", rank,
                   ") for rank ", rank, ", got ", axis);
  return {};
}

/// NumPy/PyTorch broadcasting of two shapes (trailing dimensions aligned, a
/// 1 stretches); std::nullopt when they do not broadcast.
inline std::optional<Dims> broadcastDims(const Dims &lhs, const Dims &rhs) {
  size_t rank = lhs.size() > rhs.size() ? lhs.size() : rhs.size();
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1)
      return std::nullopt;
    out[rank - 1 - i] = l == 1 ? r : l;
  }
  return out;
}

} // namespace memopt::shapes

#endif // MEMOPT_CONTRACT_SHAPERULE_H
