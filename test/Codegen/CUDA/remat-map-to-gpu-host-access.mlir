// RUN: remat-opt %s -pass-pipeline='builtin.module(func.func(remat-map-to-gpu))' -split-input-file -verify-diagnostics

// Device buffers are not the host's to read: a load that no kernel holds
// is an error, not a segmentation fault when the step runs.
func.func @host_load(%x: memref<f32>) -> f32 {
  // expected-error @below {{reads or writes a device buffer on the host}}
  %v = memref.load %x[] : memref<f32>
  return %v : f32
}

// -----

func.func @host_store(%x: memref<4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  // expected-error @below {{reads or writes a device buffer on the host}}
  memref.store %v, %x[%c0] : memref<4xf32>
  return
}
