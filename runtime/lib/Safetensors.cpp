//===- Safetensors.cpp - read and write .safetensors files ----------------===//

#include "memopt/runtime/Safetensors.h"

#include "JsonText.h"
#include "memopt/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

using namespace memopt::runtime;

namespace {

/// Headers larger than this are refused before allocating (the reference
/// implementation uses the same 100 MB bound).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeName {
  DType dtype;
  const char *name;
};
constexpr DTypeName kDTypes[] = {
    {DType::F64, "F64"},   {DType::F32, "F32"}, {DType::F16, "F16"},
    {DType::BF16, "BF16"}, {DType::I64, "I64"}, {DType::I32, "I32"},
    {DType::UI8, "U8"},
};

[[noreturn]] void fail(const std::string &what, const std::string &message) {
  throw Error(ErrorCode::InvalidArgument,
              concat("safetensors: ", what, ": ", message));
}

uint64_t readLittleEndian64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

} // namespace

std::string memopt::runtime::safetensorsDTypeName(DType dtype) {
  for (const DTypeName &d : kDTypes)
    if (d.dtype == dtype)
      return d.name;
  throw Error(ErrorCode::Internal, "safetensors: unhandled dtype");
}

const NamedTensor *SafetensorsFile::find(const std::string &name) const {
  for (const NamedTensor &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

SafetensorsFile
memopt::runtime::parseSafetensors(const std::vector<uint8_t> &bytes,
                                  const std::string &what) {
  if (bytes.size() < 8)
    fail(what, concat("file of ", bytes.size(),
                      " bytes is too short for the 8-byte header length"));
  uint64_t headerBytes = readLittleEndian64(bytes.data());
  if (headerBytes > kMaxHeaderBytes || headerBytes > bytes.size() - 8)
    fail(what, concat("header length ", headerBytes, " exceeds the file (",
                      bytes.size(), " bytes)"));
  const char *headerBegin = reinterpret_cast<const char *>(bytes.data() + 8);
  // JSON keeps the last of two equal keys; a tensor named twice is an
  // error, not a silent choice.
  std::unordered_map<int, std::unordered_set<std::string>> keysAtDepth;
  std::string duplicate;
  auto noteKey = [&](int depth, nlohmann::json::parse_event_t event,
                     nlohmann::json &parsed) {
    if (event == nlohmann::json::parse_event_t::object_start)
      keysAtDepth[depth + 1].clear();
    if (event == nlohmann::json::parse_event_t::key && duplicate.empty()) {
      const std::string &key = parsed.get_ref<const std::string &>();
      if (!keysAtDepth[depth].insert(key).second)
        duplicate = key;
    }
    return true;
  };
  nlohmann::json header =
      nlohmann::json::parse(headerBegin, headerBegin + headerBytes, noteKey,
                            /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    fail(what, "header is not a JSON object");
  if (!duplicate.empty())
    fail(what, concat("key '", duplicate, "' appears twice in the header"));
  uint64_t dataBegin = 8 + headerBytes;
  uint64_t dataBytes = bytes.size() - dataBegin;

  SafetensorsFile file;
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (auto &[name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        fail(what, "__metadata__ is not an object");
      for (auto &[key, value] : entry.items()) {
        if (!value.is_string())
          fail(what,
               concat("__metadata__ value of '", key, "' is not a string"));
        file.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    std::string where = concat("tensor '", name, "'");
    if (!entry.is_object() || !entry.contains("dtype") ||
        !entry.contains("shape") || !entry.contains("data_offsets"))
      fail(what,
           where + ": expected an object with dtype, shape and data_offsets");
    NamedTensor tensor;
    tensor.name = name;
    const auto &dtype = entry["dtype"];
    auto known = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                              [&](const DTypeName &d) {
                                return dtype.is_string() && dtype == d.name;
                              });
    if (known == std::end(kDTypes))
      fail(what, concat(where, ": unsupported dtype ", jsonText(dtype)));
    tensor.dtype = known->dtype;
    if (!entry["shape"].is_array())
      fail(what, where + ": shape is not an array");
    for (const auto &d : entry["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        fail(what, concat(where, ": bad dimension ", jsonText(d)));
      tensor.shape.push_back(d.get<int64_t>());
    }
    std::optional<int64_t> count = checkedNumElements(tensor.shape);
    if (!count)
      fail(what, where + ": element count overflows");
    const auto &offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 ||
        !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      fail(what, where + ": data_offsets must be two non-negative integers");
    uint64_t begin = offsets[0], end = offsets[1];
    uint64_t expected = static_cast<uint64_t>(*count) * dtypeSize(tensor.dtype);
    if (begin > end || end > dataBytes)
      fail(what,
           concat(where, ": data_offsets [", begin, ", ", end,
                  ") lie outside the data section of ", dataBytes, " bytes"));
    if (end - begin != expected)
      fail(what, concat(where, ": data_offsets cover ", end - begin,
                        " bytes but ", safetensorsDTypeName(tensor.dtype), " ",
                        formatShape(tensor.shape), " needs ", expected));
    tensor.data.assign(bytes.begin() + dataBegin + begin,
                       bytes.begin() + dataBegin + end);
    ranges.push_back({begin, end, name});
    file.tensors.push_back(std::move(tensor));
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range &a, const Range &b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].begin < ranges[i - 1].end)
      fail(what, concat("tensors '", ranges[i - 1].name, "' and '",
                        ranges[i].name, "' overlap"));
  // Keep the tensors in the order of their data, like the file.
  std::vector<NamedTensor> ordered;
  ordered.reserve(file.tensors.size());
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < file.tensors.size(); ++i)
    index[file.tensors[i].name] = i;
  for (const Range &r : ranges)
    ordered.push_back(std::move(file.tensors[index.at(r.name)]));
  file.tensors = std::move(ordered);
  return file;
}

SafetensorsFile memopt::runtime::readSafetensors(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(ErrorCode::Io,
                concat("safetensors: '", path, "' is a directory, not a file"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorCode::Io, concat("safetensors: cannot open '", path, "'"));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad())
    throw Error(ErrorCode::Io, concat("safetensors: cannot read '", path, "'"));
  return parseSafetensors(bytes, path);
}

void memopt::runtime::writeSafetensors(const std::string &path,
                                       const SafetensorsFile &file) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!file.metadata.empty())
    header["__metadata__"] = file.metadata;
  uint64_t offset = 0;
  for (const NamedTensor &t : file.tensors) {
    header[t.name] = {{"dtype", safetensorsDTypeName(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string json = header.dump(
      -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  // Pad the header with spaces to 8 bytes, as the reference writer does.
  json.append((8 - json.size() % 8) % 8, ' ');

  std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw Error(ErrorCode::Io,
                  concat("safetensors: cannot write '", temp, "'"));
    uint8_t length[8];
    uint64_t n = json.size();
    for (int i = 0; i < 8; ++i)
      length[i] = static_cast<uint8_t>(n >> (8 * i));
    out.write(reinterpret_cast<const char *>(length), 8);
    out.write(json.data(), static_cast<std::streamsize>(json.size()));
    for (const NamedTensor &t : file.tensors)
      out.write(reinterpret_cast<const char *>(t.data.data()),
                static_cast<std::streamsize>(t.data.size()));
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      throw Error(ErrorCode::Io,
                  concat("safetensors: cannot write '", temp, "'"));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw Error(ErrorCode::Io, concat("safetensors: cannot rename '", temp,
                                      "' to '", path, "'"));
  }
}
