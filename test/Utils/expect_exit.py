"""Runs a command and fails unless it exits with the given code.

Usage: expect_exit.py CODE[,CODE...] -- COMMAND [ARGS...]
(any of the codes listed passes). `not` only tells zero from non-zero; remat's tools promise exact codes
(1 for a failed check or compile error, 2 for bad usage or inputs) and never
a crash (128 and up).
"""
import subprocess
import sys

codes = [int(c) for c in sys.argv[1].split(",")]
assert sys.argv[2] == "--"
result = subprocess.run(sys.argv[3:], stdout=sys.stdout, stderr=sys.stderr)
if result.returncode not in codes:
    sys.exit(f"expected exit code {sys.argv[1]}, got {result.returncode}")
