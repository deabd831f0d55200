// A main for a lowered step's host code: taking the step's address makes the
// link resolve every runtime function the step calls. Run, the module loads
// in the static constructors, on the device or with a "no CUDA device" error.
extern void step(void);

int main(void) { return &step == 0; }
