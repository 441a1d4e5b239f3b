//===- KernelRulesConv.cpp - rules of convolution and pooling -------------===//
//
// The rules of conv2d and pooling (max, average, global average) and of
// their backward ops, which share the forward ops' attributes and output
// shape computations.
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

#include "memopt/Contract/ConvShapes.h"
#include "memopt/Contract/PoolShapes.h"

namespace memopt::runtime::detail {

namespace {

/// The attributes of conv2d and its backward ops.
Conv2DAttrs convAttrs(Rules &r) {
  Conv2DAttrs a;
  a.strides = r.pair("strides", 1, {1, 1});
  a.padding = r.pair("padding", 0, {0, 0});
  a.dilations = r.pair("dilations", 1, {1, 1});
  a.groups = r.i64("groups", 1);
  r.done();
  return a;
}

/// Checks that an NxCxHxW input `x` and a Kx(C/groups)xRxS weight `w` form
/// a convolution with `a` (the contract's rule, ConvShapes.h), and returns
/// its output shape.
Shape convOutputShape(Rules &r, const TensorInfo &x, const char *xName,
                      const TensorInfo &w, const char *wName,
                      const Conv2DAttrs &a,
                      std::optional<int64_t> biasElements = std::nullopt) {
  r.rank(x, xName, 4, "NxCxHxW");
  r.rank(w, wName, 4, "Kx(C/groups)xRxS");
  Shape out;
  if (shapes::ShapeProblem problem = shapes::conv2dShape(
          x.shape, w.shape, biasElements, a, out, xName, wName);
      !problem.empty())
    r.error(problem);
  return out;
}

/// The attributes of the pooling backward ops (strides required, as in the
/// dialect).
Pool2DAttrs poolAttrs(Rules &r) {
  Pool2DAttrs a;
  auto kernel = r.ints("kernel_size", 2, 1, true);
  a.kernelSize = {(*kernel)[0], (*kernel)[1]};
  auto strides = r.ints("strides", 2, 1, true);
  a.strides = {(*strides)[0], (*strides)[1]};
  a.padding = r.pair("padding", 0, {0, 0});
  r.done();
  return a;
}

/// Checks that the window of `a` fits an NxCxHxW input `x` (the contract's
/// rule, PoolShapes.h), and returns the pooling's output shape.
Shape poolOutputShape(Rules &r, const TensorInfo &x, const char *xName,
                      const Pool2DAttrs &a) {
  r.rank(x, xName, 4, "NxCxHxW");
  Shape out;
  if (shapes::ShapeProblem problem = shapes::pool2dShape(
          x.shape, {a.kernelSize, a.strides, a.padding}, out, xName);
      !problem.empty())
    r.error(problem);
  return out;
}

} // namespace

KernelAttrs conv2d(Rules &r) {
  r.arity(2, 3, 1);
  const TensorInfo &x = r.in(0), &w = r.in(1);
  r.isFloat(x, "input");
  r.rank(x, "input", 4, "NxCxHxW");
  r.rank(w, "weight", 4, "Kx(C/groups)xRxS");
  r.sameDType(x, "input", w, "weight");
  Conv2DAttrs a = convAttrs(r);
  std::optional<int64_t> biasElements;
  if (r.numInputs() == 3) {
    const TensorInfo &b = r.in(2);
    r.rank(b, "bias", 1);
    r.sameDType(x, "input", b, "bias");
    biasElements = b.shape[0];
  }
  Shape out = convOutputShape(r, x, "input", w, "weight", a, biasElements);
  r.output(0, x.dtype, out);
  return a;
}

/// conv2d_backward_input(grad_output, weight) -> grad of the NxCxHxW input
/// (its shape is the output's).
KernelAttrs conv2dBackwardInput(Rules &r) {
  r.arity(2, 2, 1);
  const TensorInfo &dy = r.in(0), &w = r.in(1), &dx = r.out(0);
  r.isFloat(dy, "grad_output");
  r.sameDType(dy, "grad_output", w, "weight");
  r.sameDType(dy, "grad_output", dx, "output 0");
  Conv2DAttrs a = convAttrs(r);
  Shape fwd = convOutputShape(r, dx, "output 0", w, "weight", a);
  if (dy.shape != fwd)
    r.error("expected grad_output shape ", formatShape(fwd),
            " (the conv2d output for an input of shape ", formatShape(dx.shape),
            "), got ", formatShape(dy.shape));
  return a;
}

/// conv2d_backward_weight(grad_output, input) -> grad of the
/// Kx(C/groups)xRxS weight (its shape is the output's).
KernelAttrs conv2dBackwardWeight(Rules &r) {
  r.arity(2, 2, 1);
  const TensorInfo &dy = r.in(0), &x = r.in(1), &dw = r.out(0);
  r.isFloat(dy, "grad_output");
  r.sameDType(dy, "grad_output", x, "input");
  r.sameDType(dy, "grad_output", dw, "output 0");
  Conv2DAttrs a = convAttrs(r);
  Shape fwd = convOutputShape(r, x, "input", dw, "output 0", a);
  if (dy.shape != fwd)
    r.error("expected grad_output shape ", formatShape(fwd),
            " (the conv2d output for input ", formatShape(x.shape),
            " and weight ", formatShape(dw.shape), "), got ",
            formatShape(dy.shape));
  return a;
}

KernelAttrs pool2d(Rules &r) {
  r.arity(1, 1, 1);
  Pool2DAttrs a;
  auto kernel = r.ints("kernel_size", 2, 1, true);
  a.kernelSize = {(*kernel)[0], (*kernel)[1]};
  a.strides = r.pair("strides", 1, a.kernelSize);
  a.padding = r.pair("padding", 0, {0, 0});
  r.done();
  const TensorInfo &x = r.in(0);
  r.isFloat(x, "x");
  r.rank(x, "x", 4, "NxCxHxW");
  r.output(0, x.dtype, poolOutputShape(r, x, "input", a));
  return a;
}

KernelAttrs globalAvgPool2d(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  const TensorInfo &x = r.in(0);
  r.isFloat(x, "x");
  r.rank(x, "x", 4, "NxCxHxW");
  r.output(0, x.dtype, shapes::globalAvgPool2dShape(x.shape));
  return std::monostate{};
}

/// max_pool2d_backward(grad_output, x) -> grad of x.
KernelAttrs maxPool2dBackward(Rules &r) {
  r.arity(2, 2, 1);
  Pool2DAttrs a = poolAttrs(r);
  const TensorInfo &dy = r.in(0), &x = r.in(1);
  r.isFloat(x, "x");
  r.sameDType(x, "x", dy, "grad_output");
  Shape fwd = poolOutputShape(r, x, "x", a);
  if (dy.shape != fwd)
    r.error("expected grad_output shape ", formatShape(fwd), ", got ",
            formatShape(dy.shape));
  r.output(0, x.dtype, x.shape);
  return a;
}

/// avg_pool2d_backward(grad_output) -> grad of the input (the output's
/// shape).
KernelAttrs avgPool2dBackward(Rules &r) {
  r.arity(1, 1, 1);
  Pool2DAttrs a = poolAttrs(r);
  const TensorInfo &dy = r.in(0), &dx = r.out(0);
  r.isFloat(dy, "grad_output");
  r.sameDType(dy, "grad_output", dx, "output 0");
  Shape fwd = poolOutputShape(r, dx, "output 0", a);
  if (dy.shape != fwd)
    r.error("expected grad_output shape ", formatShape(fwd),
            " (the avg_pool2d output for an input of shape ",
            formatShape(dx.shape), "), got ", formatShape(dy.shape));
  return a;
}

KernelAttrs globalAvgPool2dBackward(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  const TensorInfo &dy = r.in(0), &dx = r.out(0);
  r.isFloat(dy, "grad_output");
  r.sameDType(dy, "grad_output", dx, "output 0");
  r.rank(dx, "output 0", 4, "NxCxHxW");
  Shape fwd = shapes::globalAvgPool2dShape(dx.shape);
  if (dy.shape != fwd)
    r.error("expected grad_output shape ", formatShape(fwd), ", got ",
            formatShape(dy.shape));
  return std::monostate{};
}

} // namespace memopt::runtime::detail
