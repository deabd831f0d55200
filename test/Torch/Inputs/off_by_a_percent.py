"""A remat-run that computes one output wrong: runs the real remat-run
(argv[1]) with the remaining arguments, then scales the first gradient it
wrote (out1.npy under --outputs) by 1.01, as a mapping that is slightly wrong
would. check_torch.py must reject it."""
import os
import subprocess
import sys

import numpy as np

real, args = sys.argv[1], sys.argv[2:]
status = subprocess.run([real, *args]).returncode
if status == 0:
    path = os.path.join(args[args.index("--outputs") + 1], "out1.npy")
    np.save(path, np.load(path) * np.float32(1.01))
sys.exit(status)
