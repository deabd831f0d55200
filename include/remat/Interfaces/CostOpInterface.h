//===- CostOpInterface.h - FLOPs of an op -----------------------*- C++ -*-===//
//
// Declares CostOpInterface, through which remat's analyses learn what an op
// costs to recompute.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERFACES_COSTOPINTERFACE_H
#define REMAT_INTERFACES_COSTOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"

#include "remat/Interfaces/CostOpInterface.h.inc"

#endif // REMAT_INTERFACES_COSTOPINTERFACE_H
