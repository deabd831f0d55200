//===- CostOpInterface.td - FLOPs of an op -----------------*- tablegen -*-===//
//
// The op interface through which remat's analyses learn what an op costs to
// recompute. remat's own ops implement it in ODS, remat's cost model attaches
// external models to upstream ops, and other dialects implement it to plug
// their ops in.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERFACES_COSTOPINTERFACE_TD
#define REMAT_INTERFACES_COSTOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Remat_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::remat";
  let description = [{
    The arithmetic cost of one execution of an op, in floating-point (or
    integer) operations: what recomputing it in the backward region costs.
    Ops with static shapes only; an op that cannot tell returns a negative
    number.
  }];
  let methods = [
    InterfaceMethod<"Returns the op's FLOPs, or -1 if it cannot tell.",
                    "int64_t", "getFlops">
  ];
}

#endif // REMAT_INTERFACES_COSTOPINTERFACE_TD
