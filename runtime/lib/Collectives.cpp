//===- Collectives.cpp - the reduction collectives run -------------------===//
//
// memopt.all_reduce over a Collectives implementation: the bucket packed
// into one buffer, an all-to-all of its slices, each rank's slice summed in
// rank order, an all-gather of the reduced slices (CollectiveShapes.h).
// The order and the arithmetic are fixed here, not by the communication
// library, so the bits do not depend on its algorithms.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Collectives.h"

#include "memopt/Contract/CollectiveShapes.h"
#include "memopt/runtime/Error.h"
#include "memopt/runtime/Half.h"

#include <cstring>

namespace memopt::runtime {

Collectives::~Collectives() = default;

namespace {

/// The mean over `ranks` rows of `count` elements, `stride` elements apart,
/// summed in row order in `Acc` and stored through `store`.
template <typename Acc, typename Load, typename Store>
void meanOfRows(int64_t count, int ranks, int64_t stride, Load load,
                Store store) {
  Acc divisor = static_cast<Acc>(ranks);
  for (int64_t i = 0; i < count; ++i) {
    Acc sum = load(i);
    for (int k = 1; k < ranks; ++k)
      sum += load(k * stride + i);
    store(i, sum / divisor);
  }
}

/// The mean of the `ranks` slices at `slices` (each `count` elements of
/// `dtype`, one after the other) into `out`, which may be the first slice.
void meanOfSlices(const void *slices, void *out, int64_t count, int ranks,
                  DType dtype) {
  switch (dtype) {
  case DType::F32: {
    auto *in = static_cast<const float *>(slices);
    auto *o = static_cast<float *>(out);
    meanOfRows<float>(
        count, ranks, count, [&](int64_t i) { return in[i]; },
        [&](int64_t i, float v) { o[i] = v; });
    return;
  }
  case DType::F64: {
    auto *in = static_cast<const double *>(slices);
    auto *o = static_cast<double *>(out);
    meanOfRows<double>(
        count, ranks, count, [&](int64_t i) { return in[i]; },
        [&](int64_t i, double v) { o[i] = v; });
    return;
  }
  case DType::F16: {
    auto *in = static_cast<const uint16_t *>(slices);
    auto *o = static_cast<uint16_t *>(out);
    meanOfRows<float>(
        count, ranks, count, [&](int64_t i) { return halfBitsToFloat(in[i]); },
        [&](int64_t i, float v) { o[i] = floatToHalfBits(v); });
    return;
  }
  case DType::BF16: {
    auto *in = static_cast<const uint16_t *>(slices);
    auto *o = static_cast<uint16_t *>(out);
    meanOfRows<float>(
        count, ranks, count,
        [&](int64_t i) { return bfloat16BitsToFloat(in[i]); },
        [&](int64_t i, float v) { o[i] = floatToBFloat16Bits(v); });
    return;
  }
  default:
    throw Error(
        ErrorCode::InvalidArgument,
        concat("all_reduce: expected a float dtype, got ", dtypeName(dtype)));
  }
}

/// FNV-1a, 64 bits: the plans' fingerprint (not a security measure).
uint64_t fingerprint(std::string_view text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

} // namespace

void allReduceMean(Collectives &collectives,
                   const std::vector<TensorRef> &inputs,
                   const std::vector<TensorRef> &outputs, Workspace workspace) {
  if (inputs.size() != outputs.size())
    throw Error(ErrorCode::InvalidArgument,
                concat("all_reduce: ", inputs.size(), " inputs but ",
                       outputs.size(), " outputs"));
  if (inputs.empty())
    return;
  DType dtype = inputs.front().dtype;
  size_t elementBytes = dtypeSize(dtype);
  int64_t total = 0;
  for (const TensorRef &t : inputs) {
    if (t.dtype != dtype)
      throw Error(ErrorCode::InvalidArgument,
                  concat("all_reduce: inputs of dtypes ", dtypeName(dtype),
                         " and ", dtypeName(t.dtype), " in one bucket"));
    total += t.numElements;
  }
  int ranks = collectives.size();
  int64_t slice = shapes::allReduceSliceElements(total, ranks);
  size_t sliceBytes = static_cast<size_t>(slice) * elementBytes;
  size_t packedBytes = sliceBytes * static_cast<size_t>(ranks);
  bool inPlace = shapes::allReduceSendsInPlace(
      static_cast<int64_t>(inputs.size()), total, ranks);
  size_t workspaceBytes = (inPlace ? 1 : 2) * packedBytes;

  std::vector<unsigned char> own;
  auto *scratch = static_cast<unsigned char *>(workspace.data);
  if (!scratch || workspace.bytes < workspaceBytes) {
    own.resize(workspaceBytes);
    scratch = own.data();
  }
  // What is sent: one tensor as it is, or the bucket packed and padded.
  unsigned char *received = scratch;
  const unsigned char *sent =
      static_cast<const unsigned char *>(inputs.front().data);
  if (!inPlace) {
    unsigned char *packed = scratch + packedBytes;
    size_t offset = 0;
    for (const TensorRef &t : inputs) {
      if (t.bytes())
        std::memcpy(packed + offset, t.data, t.bytes());
      offset += t.bytes();
    }
    std::memset(packed + offset, 0, packedBytes - offset);
    sent = packed;
  }

  // Rank r receives every rank's slice r, reduces them into the first
  // received slice (each element read before it is written), and gathers
  // the reduced slices of every rank: into the output itself, or into the
  // packed buffer, whose contents were sent already.
  collectives.allToAll(sent, received, sliceBytes);
  meanOfSlices(received, received, slice, ranks, dtype);
  if (inPlace) {
    collectives.allGather(received, outputs.front().data, sliceBytes);
    return;
  }
  unsigned char *gathered = scratch + packedBytes;
  collectives.allGather(received, gathered, sliceBytes);
  size_t offset = 0;
  for (const TensorRef &t : outputs) {
    if (t.bytes())
      std::memcpy(t.data, gathered + offset, t.bytes());
    offset += t.bytes();
  }
}

void broadcastFrom(Collectives &collectives, const TensorRef &input,
                   const TensorRef &output, int64_t root) {
  if (root < 0 || root >= collectives.size())
    throw Error(ErrorCode::Collective,
                concat("broadcast: root ", root, " is not a rank of ",
                       collectives.size()));
  if (collectives.rank() == root && input.data != output.data && input.bytes())
    std::memcpy(output.data, input.data, output.bytes());
  collectives.broadcast(output.data, output.bytes(), static_cast<int>(root));
}

void checkSameOnEveryRank(Collectives &collectives, std::string_view text,
                          std::string_view what) {
  uint64_t mine[2] = {fingerprint(text), text.size()};
  std::vector<uint64_t> all(2 * static_cast<size_t>(collectives.size()));
  collectives.allGather(mine, all.data(), sizeof(mine));
  for (int k = 1; k < collectives.size(); ++k)
    if (all[2 * k] != all[0] || all[2 * k + 1] != all[1])
      throw Error(ErrorCode::Collective,
                  concat("the ranks disagree on the ", what, ": rank ", k,
                         "'s (", all[2 * k + 1],
                         " bytes) differs from rank "
                         "0's (",
                         all[1],
                         " bytes); every rank must compile "
                         "the same model with the same options"));
}

} // namespace memopt::runtime
