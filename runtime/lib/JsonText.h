//===- JsonText.h - JSON values quoted in error messages -------*- C++ -*-===//
//
// Plans and safetensors headers come from outside: a value quoted in an
// error message may be nested a hundred thousand levels deep (nlohmann's
// dump() then recurses off the stack) or be megabytes long. jsonText quotes
// what is short and shallow and names the rest.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_JSONTEXT_H
#define MEMOPT_RUNTIME_LIB_JSONTEXT_H

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace memopt::runtime {

/// `v` as JSON text when it nests at most 8 levels (cut to 120 characters),
/// otherwise "a deeply nested array" (or object).
inline std::string jsonText(const nlohmann::json &v) {
  constexpr int kMaxDepth = 8;
  constexpr size_t kMaxChars = 120;
  // Depth by an explicit stack: no recursion on what is being measured.
  std::vector<std::pair<const nlohmann::json *, int>> stack = {{&v, 0}};
  while (!stack.empty()) {
    auto [value, depth] = stack.back();
    stack.pop_back();
    if (!value->is_structured())
      continue;
    if (depth >= kMaxDepth)
      return v.is_array() ? "a deeply nested array" : "a deeply nested object";
    for (const nlohmann::json &child : *value)
      stack.push_back({&child, depth + 1});
  }
  std::string text =
      v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxChars)
    text = text.substr(0, kMaxChars - 3) + "...";
  return text;
}

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_LIB_JSONTEXT_H
