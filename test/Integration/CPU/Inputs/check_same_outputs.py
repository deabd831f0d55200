"""Exits 1 unless directories A and B hold the same out*.npy files, byte for
byte; prints how many there are."""
import filecmp
import os
import sys

a, b = sys.argv[1:]
names = sorted(f for f in os.listdir(a) if f.endswith(".npy"))
if not names or names != sorted(f for f in os.listdir(b) if f.endswith(".npy")):
    sys.exit(f"{a} and {b} hold different outputs")
differ = [n for n in names
          if not filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False)]
if differ:
    sys.exit(f"outputs differ: {', '.join(differ)}")
print(f"{len(names)} outputs bit-identical")
