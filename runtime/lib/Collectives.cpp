//===- Collectives.cpp - the reduction collectives run -------------------===//
//
// memopt.all_reduce over a Collectives implementation: the bucket packed
// into one buffer, an all-to-all of its slices, each rank's slice summed in
// rank order, an all-gather of the reduced slices (CollectiveShapes.h).
// memopt.reduce_scatter: the bucket packed by owner and reduced the same
// way, then each reduced piece sent to the rank that owns it.
// memopt.all_gather: every rank's rows of a tensor sent to every rank.
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

/// The sum over `ranks` rows of `count` elements, `stride` elements apart,
/// in row order in `Acc`, divided by `divisor` and stored through `store`.
template <typename Acc, typename Load, typename Store>
void meanOfRows(int64_t count, int ranks, int64_t stride, int divisor_,
                Load load, Store store) {
  Acc divisor = static_cast<Acc>(divisor_);
  for (int64_t i = 0; i < count; ++i) {
    Acc sum = load(i);
    for (int k = 1; k < ranks; ++k)
      sum += load(k * stride + i);
    store(i, sum / divisor);
  }
}

/// The mean (or, unless `mean`, the sum) of the `ranks` slices at `slices`
/// (each `count` elements of `dtype`, one after the other) into `out`,
/// which may be the first slice.
void meanOfSlices(const void *slices, void *out, int64_t count, int ranks,
                  DType dtype, bool mean = true) {
  const int divisor = mean ? ranks : 1;
  switch (dtype) {
  case DType::F32: {
    auto *in = static_cast<const float *>(slices);
    auto *o = static_cast<float *>(out);
    meanOfRows<float>(
        count, ranks, count, divisor, [&](int64_t i) { return in[i]; },
        [&](int64_t i, float v) { o[i] = v; });
    return;
  }
  case DType::F64: {
    auto *in = static_cast<const double *>(slices);
    auto *o = static_cast<double *>(out);
    meanOfRows<double>(
        count, ranks, count, divisor, [&](int64_t i) { return in[i]; },
        [&](int64_t i, double v) { o[i] = v; });
    return;
  }
  case DType::F16: {
    auto *in = static_cast<const uint16_t *>(slices);
    auto *o = static_cast<uint16_t *>(out);
    meanOfRows<float>(
        count, ranks, count, divisor,
        [&](int64_t i) { return halfBitsToFloat(in[i]); },
        [&](int64_t i, float v) { o[i] = floatToHalfBits(v); });
    return;
  }
  case DType::BF16: {
    auto *in = static_cast<const uint16_t *>(slices);
    auto *o = static_cast<uint16_t *>(out);
    meanOfRows<float>(
        count, ranks, count, divisor,
        [&](int64_t i) { return bfloat16BitsToFloat(in[i]); },
        [&](int64_t i, float v) { o[i] = floatToBFloat16Bits(v); });
    return;
  }
  default:
    throw Error(
        ErrorCode::InvalidArgument,
        concat("collective: expected a float dtype, got ", dtypeName(dtype)));
  }
}

} // namespace

void Collectives::copyLocal(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
}

void Collectives::zeroLocal(void *dst, size_t bytes) {
  if (bytes)
    std::memset(dst, 0, bytes);
}

void Collectives::reduceSlices(const void *slices, void *out, int64_t count,
                               int ranks, DType dtype, bool mean) {
  meanOfSlices(slices, out, count, ranks, dtype, mean);
}

namespace {

/// The one dtype of a bucket's tensors; throws if they differ.
DType bucketDType(const std::vector<TensorRef> &inputs, const char *kernel) {
  DType dtype = inputs.front().dtype;
  for (const TensorRef &t : inputs)
    if (t.dtype != dtype)
      throw Error(ErrorCode::InvalidArgument,
                  concat(kernel, ": inputs of dtypes ", dtypeName(dtype),
                         " and ", dtypeName(t.dtype), " in one bucket"));
  return dtype;
}

/// The workspace's bytes, or (host memory) a buffer of the call's own when
/// it has fewer; device memory has no such fallback: the plan gives every
/// collective its workspace.
unsigned char *scratchFor(const Collectives &collectives, Workspace workspace,
                          size_t bytes, std::vector<unsigned char> &own,
                          const char *kernel) {
  if (workspace.data && workspace.bytes >= bytes)
    return static_cast<unsigned char *>(workspace.data);
  if (collectives.onDevice())
    throw Error(ErrorCode::InvalidArgument,
                concat(kernel, ": a workspace of ", workspace.bytes, " bytes, ",
                       bytes, " needed"));
  own.resize(bytes);
  return own.data();
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

namespace {

void allReduce(Collectives &collectives, const std::vector<TensorRef> &inputs,
               const std::vector<TensorRef> &outputs, Workspace workspace,
               bool mean) {
  if (inputs.size() != outputs.size())
    throw Error(ErrorCode::InvalidArgument,
                concat("all_reduce: ", inputs.size(), " inputs but ",
                       outputs.size(), " outputs"));
  if (inputs.empty())
    return;
  DType dtype = bucketDType(inputs, "all_reduce");
  size_t elementBytes = dtypeSize(dtype);
  int64_t total = 0;
  for (const TensorRef &t : inputs)
    total += t.numElements;
  int ranks = collectives.size();
  int64_t slice = shapes::allReduceSliceElements(total, ranks);
  size_t sliceBytes = static_cast<size_t>(slice) * elementBytes;
  size_t packedBytes = sliceBytes * static_cast<size_t>(ranks);
  bool inPlace = shapes::allReduceSendsInPlace(
      static_cast<int64_t>(inputs.size()), total, ranks);
  size_t workspaceBytes = (inPlace ? 1 : 2) * packedBytes;

  std::vector<unsigned char> own;
  unsigned char *scratch =
      scratchFor(collectives, workspace, workspaceBytes, own, "all_reduce");
  // What is sent: one tensor as it is, or the bucket packed and padded.
  unsigned char *received = scratch;
  const unsigned char *sent =
      static_cast<const unsigned char *>(inputs.front().data);
  if (!inPlace) {
    unsigned char *packed = scratch + packedBytes;
    size_t offset = 0;
    for (const TensorRef &t : inputs) {
      collectives.copyLocal(packed + offset, t.data, t.bytes());
      offset += t.bytes();
    }
    collectives.zeroLocal(packed + offset, packedBytes - offset);
    sent = packed;
  }

  // Rank r receives every rank's slice r, reduces them into the first
  // received slice (each element read before it is written), and gathers
  // the reduced slices of every rank: into the output itself, or into the
  // packed buffer, whose contents were sent already.
  collectives.allToAll(sent, received, sliceBytes);
  collectives.reduceSlices(received, received, slice, ranks, dtype, mean);
  if (inPlace) {
    collectives.allGather(received, outputs.front().data, sliceBytes);
    return;
  }
  unsigned char *gathered = scratch + packedBytes;
  collectives.allGather(received, gathered, sliceBytes);
  size_t offset = 0;
  for (const TensorRef &t : outputs) {
    collectives.copyLocal(t.data, gathered + offset, t.bytes());
    offset += t.bytes();
  }
}

} // namespace

void allReduceMean(Collectives &collectives,
                   const std::vector<TensorRef> &inputs,
                   const std::vector<TensorRef> &outputs, Workspace workspace) {
  allReduce(collectives, inputs, outputs, workspace, /*mean=*/true);
}

void allReduceSum(Collectives &collectives,
                  const std::vector<TensorRef> &inputs,
                  const std::vector<TensorRef> &outputs, Workspace workspace) {
  allReduce(collectives, inputs, outputs, workspace, /*mean=*/false);
}

namespace {

/// Rank `k`'s rows of `t` (divided among `ranks`), in elements: the first
/// and the count.
std::pair<int64_t, int64_t> rowsOf(const TensorRef &t, int ranks, int k) {
  int64_t rows = t.dim(0), rowElements = rows ? t.numElements / rows : 0;
  return {shapes::rowSliceStart(rows, ranks, k) * rowElements,
          shapes::rowSliceRows(rows, ranks, k) * rowElements};
}

} // namespace

void reduceScatterMean(Collectives &collectives,
                       const std::vector<TensorRef> &inputs,
                       const std::vector<int64_t> &owners,
                       const std::vector<TensorRef> &outputs,
                       Workspace workspace) {
  const int ranks = collectives.size(), me = collectives.rank();
  if (inputs.empty() || owners.size() != inputs.size())
    throw Error(ErrorCode::InvalidArgument,
                concat("reduce_scatter: ", inputs.size(), " inputs and ",
                       owners.size(), " owners"));
  DType dtype = bucketDType(inputs, "reduce_scatter");
  const size_t elementBytes = dtypeSize(dtype);
  // Each owner's part of the bucket (its tensors, and its rows of those
  // divided by rows, in input order), in elements, the parts one after the
  // other in rank order.
  std::vector<int64_t> partStart(ranks + 1, 0);
  size_t owned = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool byRows = owners[i] == -1;
    if (owners[i] < -1 || owners[i] >= ranks ||
        (byRows && (inputs[i].rank() == 0 || inputs[i].dim(0) < ranks)))
      throw Error(ErrorCode::Collective,
                  concat("reduce_scatter: owner ", owners[i], " of input ", i,
                         " is neither a rank of ", ranks,
                         " nor -1 (by rows, at least one row per rank)"));
    if (byRows)
      for (int k = 0; k < ranks; ++k)
        partStart[k + 1] += rowsOf(inputs[i], ranks, k).second;
    else
      partStart[owners[i] + 1] += inputs[i].numElements;
    owned += owners[i] == me || byRows;
  }
  if (outputs.size() != owned)
    throw Error(ErrorCode::InvalidArgument,
                concat("reduce_scatter: rank ", me, " owns ", owned,
                       " inputs but has ", outputs.size(), " outputs"));
  // Checked before anything is sent: a rank that finds a mismatch after
  // the collective has left the others with a result it cannot take.
  for (size_t i = 0, k = 0; i < inputs.size(); ++i)
    if (owners[i] == me || owners[i] == -1) {
      const TensorRef &out = outputs[k++];
      int64_t elements = owners[i] == -1 ? rowsOf(inputs[i], ranks, me).second
                                         : inputs[i].numElements;
      if (out.numElements != elements || out.dtype != dtype)
        throw Error(ErrorCode::InvalidArgument,
                    concat("reduce_scatter: output ", k - 1,
                           " does not match input ", i));
    }
  for (int k = 0; k < ranks; ++k)
    partStart[k + 1] += partStart[k];
  const int64_t total = partStart[ranks];
  const int64_t slice = shapes::allReduceSliceElements(total, ranks);
  const size_t sliceBytes = static_cast<size_t>(slice) * elementBytes;
  const size_t packedBytes = sliceBytes * static_cast<size_t>(ranks);
  // One tensor the ranks divide is sent as it is (packed by owner it is
  // itself, whole or by rows), and its owners receive their means straight
  // into the result.
  const bool inPlace = shapes::allReduceSendsInPlace(
      static_cast<int64_t>(inputs.size()), total, ranks);
  std::vector<unsigned char> own;
  unsigned char *received =
      scratchFor(collectives, workspace, (inPlace ? 1 : 2) * packedBytes, own,
                 "reduce_scatter");
  unsigned char *packed = received + packedBytes;

  // Packed by owner, padded; every rank reduces its slice in rank order,
  // as all_reduce does.
  const void *sent = inputs.front().data;
  if (!inPlace) {
    std::vector<int64_t> cursor(partStart.begin(), partStart.end() - 1);
    auto copy = [&](int owner, const TensorRef &t, int64_t first,
                    int64_t count) {
      collectives.copyLocal(packed + cursor[owner] * elementBytes,
                            static_cast<const unsigned char *>(t.data) +
                                first * elementBytes,
                            static_cast<size_t>(count) * elementBytes);
      cursor[owner] += count;
    };
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (owners[i] != -1) {
        copy(static_cast<int>(owners[i]), inputs[i], 0, inputs[i].numElements);
        continue;
      }
      for (int k = 0; k < ranks; ++k) {
        auto [first, count] = rowsOf(inputs[i], ranks, k);
        copy(k, inputs[i], first, count);
      }
    }
    collectives.zeroLocal(packed + total * elementBytes,
                          packedBytes - total * elementBytes);
    sent = packed;
  }
  collectives.allToAll(sent, received, sliceBytes);
  collectives.reduceSlices(received, received, slice, ranks, dtype,
                           /*mean=*/true);

  // Each owner gets the pieces of its part from the ranks whose slices they
  // fall in, in rank order: its part, whole, at the start of the packed
  // buffer (sent already).
  auto overlap = [&](int sliceRank, int owner) {
    int64_t lo = std::max(partStart[owner], sliceRank * slice);
    int64_t hi = std::min(partStart[owner + 1], (sliceRank + 1) * slice);
    return std::make_pair(lo, std::max(lo, hi));
  };
  std::vector<size_t> sendBytes(ranks), sendOffsets(ranks), recvBytes(ranks),
      recvOffsets(ranks);
  for (int k = 0; k < ranks; ++k) {
    auto [lo, hi] = overlap(me, k);
    sendBytes[k] = static_cast<size_t>(hi - lo) * elementBytes;
    sendOffsets[k] = static_cast<size_t>(lo - me * slice) * elementBytes;
    auto [from, to] = overlap(k, me);
    recvBytes[k] = static_cast<size_t>(to - from) * elementBytes;
    recvOffsets[k] = static_cast<size_t>(from - partStart[me]) * elementBytes;
  }
  // Sent as it is, the one tensor's mean goes straight into its owner's
  // result (the workspace has no packed buffer then); the others receive
  // nothing.
  unsigned char nothing = 0;
  unsigned char *part = !inPlace ? packed
                        : owned
                            ? static_cast<unsigned char *>(outputs.front().data)
                            : &nothing;
  collectives.allToAllV(received, sendBytes, sendOffsets, part, recvBytes,
                        recvOffsets);
  if (inPlace)
    return;
  size_t offset = 0;
  for (const TensorRef &out : outputs) {
    collectives.copyLocal(out.data, packed + offset, out.bytes());
    offset += out.bytes();
  }
}

void allGatherRows(Collectives &collectives, const TensorRef &rows,
                   const TensorRef &output) {
  const int ranks = collectives.size(), me = collectives.rank();
  if (output.rank() == 0 || output.dim(0) < ranks)
    throw Error(
        ErrorCode::InvalidArgument,
        concat("all_gather: the output has fewer than ", ranks, " rows"));
  int64_t count = rowsOf(output, ranks, me).second;
  if (rows.numElements != count || rows.dtype != output.dtype)
    throw Error(ErrorCode::InvalidArgument,
                concat("all_gather: rank ", me, " holds ", rows.numElements,
                       " elements, not its rows of the output (", count, ")"));
  const size_t elementBytes = dtypeSize(output.dtype);
  std::vector<size_t> sendBytes(ranks, rows.bytes()), sendOffsets(ranks, 0),
      recvBytes(ranks), recvOffsets(ranks);
  for (int k = 0; k < ranks; ++k) {
    auto [first, elements] = rowsOf(output, ranks, k);
    recvBytes[k] = static_cast<size_t>(elements) * elementBytes;
    recvOffsets[k] = static_cast<size_t>(first) * elementBytes;
  }
  // Every rank's rows to every rank (its own included: the output does not
  // share the rows' storage).
  collectives.allToAllV(rows.data, sendBytes, sendOffsets, output.data,
                        recvBytes, recvOffsets);
}

void broadcastFrom(Collectives &collectives, const TensorRef *input,
                   const TensorRef &output, int64_t root) {
  if (root < 0 || root >= collectives.size())
    throw Error(ErrorCode::Collective,
                concat("broadcast: root ", root, " is not a rank of ",
                       collectives.size()));
  if (collectives.rank() == root && !input)
    throw Error(ErrorCode::Collective,
                concat("broadcast: rank ", root,
                       " is the root and has no tensor to send"));
  if (collectives.rank() == root && input->data != output.data)
    collectives.copyLocal(output.data, input->data, output.bytes());
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
