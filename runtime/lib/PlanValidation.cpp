//===- PlanValidation.cpp - checks across a plan's entries ----------------===//
//
// The PlanParser checks that relate entries of a plan to each other, as
// docs/plan-format.md's "Validation" section lists them: arguments and
// their tensors point at each other, views resolve to a root without
// cycles, arena slices overlap only when their lifetimes are disjoint,
// steps read only what earlier steps wrote and write only where they may,
// results are written, and nothing is read after an in-place step wrote
// over it.
//
//===----------------------------------------------------------------------===//

#include "PlanParser.h"

#include "memopt/runtime/Error.h"

#include <algorithm>

namespace memopt::runtime {

/// Arguments and `argument` tensors must point at each other one to one.
void PlanParser::checkArgumentsAgainstTensors() {
  for (size_t i = 0; i < plan.arguments.size(); ++i) {
    const ArgumentInfo &a = plan.arguments[i];
    std::string where = concat("arguments[", i, "]");
    if (a.tensor < 0 || a.tensor >= static_cast<int64_t>(plan.tensors.size()))
      fail(where, concat("tensor ", a.tensor, " is not a tensor id"));
    const TensorInfo &t = plan.tensors[a.tensor];
    if (t.storage != StorageKind::Argument ||
        t.argument != static_cast<int64_t>(i))
      fail(where,
           concat("tensor ", a.tensor,
                  " must have storage "
                  "\"argument\" with argument ",
                  i, ", got storage \"", storageKindName(t.storage), "\"",
                  t.storage == StorageKind::Argument
                      ? concat(" with argument ", t.argument)
                      : std::string()));
  }
  for (const TensorInfo &t : plan.tensors)
    if (t.storage == StorageKind::Argument &&
        plan.arguments[t.argument].tensor != t.id)
      fail(concat("tensors[", t.id, "]"),
           concat("argument ", t.argument, " belongs to tensor ",
                  plan.arguments[t.argument].tensor));
}

/// Follows every view to its non-view root, refusing out-of-range
/// targets, cycles and views whose size or dtype differs from the target.
void PlanParser::resolveViews() {
  size_t n = plan.tensors.size();
  for (TensorInfo &t : plan.tensors) {
    if (t.storage != StorageKind::View)
      continue;
    std::string where = concat("tensors[", t.id, "]");
    if (t.viewOf < 0 || t.viewOf >= static_cast<int64_t>(n))
      fail(where, concat("view of ", t.viewOf, ", which is not a tensor id"));
    const TensorInfo &target = plan.tensors[t.viewOf];
    if (target.dtype != t.dtype || target.numElements != t.numElements)
      fail(where, concat("view of tensors[", target.id,
                         "] must have its dtype and "
                         "element count (",
                         dtypeName(target.dtype), ", ", target.numElements,
                         " elements), got ", dtypeName(t.dtype), ", ",
                         t.numElements, " elements"));
  }
  for (TensorInfo &t : plan.tensors) {
    if (t.storage != StorageKind::View)
      continue;
    std::vector<int64_t> chain = {t.id};
    int64_t cur = t.viewOf;
    while (plan.tensors[cur].storage == StorageKind::View) {
      if (std::find(chain.begin(), chain.end(), cur) != chain.end() ||
          chain.size() > n) {
        std::string cycle;
        for (int64_t id : chain)
          cycle += concat(id, " -> ");
        fail(concat("tensors[", t.id, "]"),
             concat("views form a cycle (", cycle, cur, ")"));
      }
      chain.push_back(cur);
      cur = plan.tensors[cur].viewOf;
    }
    t.root = cur;
  }
}

/// Arena slices are aligned and inside the arena (checked per tensor and
/// per step workspace). Two slices may share bytes only when their
/// lifetimes are disjoint (a workspace lives during its step alone), and
/// version 1 plans carry no tensor lifetimes, so there a tensor may
/// overlap no other slice.
void PlanParser::checkArenaLayout() {
  struct Slice {
    uint64_t offset, bytes;
    int64_t first, last;
    bool hasLife;
    /// A workspace of step `index`, or tensor `index`.
    bool workspace;
    int64_t index;
    std::string name() const {
      return workspace ? concat("steps[", index, "] workspace")
                       : concat("tensors[", index, "]");
    }
  };
  std::vector<Slice> slices;
  for (const TensorInfo &t : plan.tensors)
    if (t.storage == StorageKind::Arena && t.bytes > 0)
      slices.push_back({t.offset, t.bytes, t.liveFirst, t.liveLast,
                        plan.version >= 2, false, t.id});
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (const Step &step = plan.steps[s]; step.workspaceBytes > 0)
      slices.push_back({step.workspaceOffset, step.workspaceBytes,
                        static_cast<int64_t>(s), static_cast<int64_t>(s), true,
                        true, static_cast<int64_t>(s)});
  // Tensors by id, then workspaces by step: of two overlapping slices,
  // the message names the later entry of the file first.
  auto entryOrder = [](const Slice &a) {
    return std::make_pair(a.workspace, a.index);
  };
  std::sort(slices.begin(), slices.end(), [&](const Slice &a, const Slice &b) {
    return a.offset != b.offset ? a.offset < b.offset
                                : entryOrder(a) < entryOrder(b);
  });
  for (size_t i = 0; i < slices.size(); ++i) {
    const Slice &a = slices[i];
    for (size_t j = i + 1;
         j < slices.size() && slices[j].offset < a.offset + a.bytes; ++j) {
      const Slice &b = slices[j];
      bool disjoint =
          a.hasLife && b.hasLife && (a.last < b.first || b.last < a.first);
      if (disjoint)
        continue;
      bool aFirst = entryOrder(a) < entryOrder(b);
      const Slice &first = aFirst ? a : b;
      const Slice &second = aFirst ? b : a;
      bool lives = first.hasLife && second.hasLife;
      fail(second.name(),
           concat("arena slice [", second.offset, ", ",
                  second.offset + second.bytes, ") overlaps ", first.name(),
                  " [", first.offset, ", ", first.offset + first.bytes, ")",
                  lives ? concat(" while both are live (steps ", first.first,
                                 "-", first.last, " and ", second.first, "-",
                                 second.last, ")")
                        : std::string(" (version 1 plans carry no "
                                      "lifetimes, so arena slices may not "
                                      "overlap)")));
    }
  }
}

/// Outputs are arena storage and distinct; inputs are defined before
/// use; an output shares an input's storage only where the kernel runs in
/// place.
void PlanParser::checkDataFlow(const Step &step, const std::string &where,
                               size_t index) {
  for (size_t o = 0; o < step.outputs.size(); ++o) {
    const TensorInfo &out = plan.tensors[step.outputs[o]];
    const TensorInfo &root = plan.tensors[out.root];
    // A parameter or state argument may be updated in place (an
    // optimizer step writing the new value over the old): the step reads
    // it as an input the kernel may overwrite.
    bool inPlaceUpdate = false;
    if (root.storage == StorageKind::Argument &&
        plan.arguments[root.argument].role != ArgumentRole::Data)
      for (size_t i = 0; i < step.inputs.size(); ++i)
        inPlaceUpdate |= plan.tensors[step.inputs[i]].root == out.root &&
                         kernelAllowsInPlace(step.kernel, o, i);
    if (root.storage != StorageKind::Arena && !inPlaceUpdate)
      fail(where, concat("output ", out.id, " is ",
                         out.root == out.id ? "an" : "a view of an", " \"",
                         storageKindName(root.storage),
                         "\" tensor; steps write only arena tensors, views "
                         "of them, and parameters or state they update in "
                         "place"));
    for (size_t p = 0; p < o; ++p)
      if (plan.tensors[step.outputs[p]].root == out.root)
        fail(where, concat("outputs ", step.outputs[p], " and ", out.id,
                           " share storage"));
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      if (plan.tensors[step.inputs[i]].root != out.root)
        continue;
      if (!kernelAllowsInPlace(step.kernel, o, i))
        fail(where, concat("output ", out.id, " shares storage with input ",
                           step.inputs[i], ", but '", kernelName(step.kernel),
                           "' cannot run in place on input ", i,
                           " producing output ", o));
    }
  }
  for (int64_t id : step.inputs) {
    const TensorInfo &root = plan.tensors[plan.tensors[id].root];
    if (root.storage == StorageKind::Arena && !written[root.id])
      fail(where, concat("input ", id, " is read before any step writes ",
                         id == root.id ? "it" : concat("tensor ", root.id)));
  }
  if (plan.version >= 2)
    for (const std::vector<int64_t> *ids : {&step.inputs, &step.outputs})
      for (int64_t id : *ids) {
        const TensorInfo &root = plan.tensors[plan.tensors[id].root];
        int64_t at = static_cast<int64_t>(index);
        if (root.storage == StorageKind::Arena &&
            (at < root.liveFirst || at > root.liveLast))
          fail(where, concat("tensor ", id,
                             " is used outside its lifetime "
                             "(steps ",
                             root.liveFirst, "-", root.liveLast, ")"));
      }
  for (int64_t id : step.outputs)
    written[plan.tensors[id].root] = true;
}

void PlanParser::checkResultsWritten() {
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const TensorInfo &root = plan.tensors[plan.tensors[plan.results[i]].root];
    if (root.storage == StorageKind::Arena && !written[root.id])
      fail(concat("results[", i, "]"),
           concat("tensor ", plan.results[i], " is never written by a step"));
    int64_t end = static_cast<int64_t>(plan.steps.size());
    if (plan.version >= 2 && root.storage == StorageKind::Arena &&
        root.liveLast < end)
      fail(concat("results[", i, "]"),
           concat("tensor ", plan.results[i],
                  " must stay live after the "
                  "last step (its live range ends at step ",
                  root.liveLast, " of ", end, ")"));
  }
}

/// A step that writes an output over an input's storage (in place, or an
/// optimizer updating a parameter) destroys the input's value: no later
/// step may read it, through the same tensor or any view of it, and it
/// may not be a result. Each storage root holds one value at a time, the
/// one its last writer produced. When read, a tensor denotes the value of
/// the nearest tensor along its view chain that a step has written so far
/// (an in-place step may write the very view it reads), or the root's own
/// content.
void PlanParser::checkInPlaceSafety() {
  size_t n = plan.tensors.size();
  std::vector<char> writtenSoFar(n, 0);
  auto valueOf = [&](int64_t id) {
    while (!writtenSoFar[id] && plan.tensors[id].storage == StorageKind::View)
      id = plan.tensors[id].viewOf;
    return id;
  };
  std::vector<int64_t> holds(n), writer(n, -1);
  for (size_t i = 0; i < n; ++i)
    holds[i] = static_cast<int64_t>(i);
  auto check = [&](int64_t id, const std::string &where) {
    int64_t root = plan.tensors[id].root;
    if (writer[root] < 0 || holds[root] == valueOf(id))
      return;
    fail(where, concat("tensor ", id, " is read after steps[", writer[root],
                       "] wrote tensor ", holds[root],
                       " over its storage (in place); a step may write "
                       "over an input only if nothing reads it later"));
  };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step &step = plan.steps[s];
    for (int64_t id : step.inputs)
      check(id, concat("steps[", s, "] (", kernelName(step.kernel), ")"));
    for (int64_t id : step.outputs) {
      int64_t root = plan.tensors[id].root;
      holds[root] = id;
      writer[root] = static_cast<int64_t>(s);
      writtenSoFar[id] = 1;
    }
  }
  for (size_t i = 0; i < plan.results.size(); ++i)
    check(plan.results[i], concat("results[", i, "]"));
}

} // namespace memopt::runtime
