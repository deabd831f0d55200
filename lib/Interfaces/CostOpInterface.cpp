//===- CostOpInterface.cpp - FLOPs of an op -------------------------------===//
//
// This file implements CostOpInterface from its ODS definition.
//
//===----------------------------------------------------------------------===//

#include "remat/Interfaces/CostOpInterface.h"

#include "remat/Interfaces/CostOpInterface.cpp.inc"
