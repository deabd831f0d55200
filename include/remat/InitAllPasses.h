//===- InitAllPasses.h - Every remat pass and pipeline ----------*- C++ -*-===//
//
// Registers every pass and pass pipeline of remat, folder by folder, for
// tools such as remat-opt.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INITALLPASSES_H
#define REMAT_INITALLPASSES_H

#include "remat/Codegen/Passes.h"
#include "remat/Conversion/Passes.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"
#include "remat/Memory/Passes.h"
#include "remat/Planning/Passes.h"

namespace remat {

/// Registers remat's passes and its -remat-bufferize, -remat-lower-cpu and
/// -remat-lower-cuda pipelines.
inline void registerAllRematPasses() {
  registerRematTransformsPasses();
  registerRematPlanningPasses();
  registerRematConversionPasses();
  registerRematMemoryPasses();
  registerRematBufferizePipeline();
  registerRematCodegenPassesAndPipelines();
}

} // namespace remat

#endif // REMAT_INITALLPASSES_H
