"""Runs a command and fails unless it exits with the given code.

Usage: expect_exit.py CODE -- COMMAND [ARGS...]
`not` only tells zero from non-zero; remat's tools promise exact codes
(1 for a failed check or compile error, 2 for bad usage or inputs) and never
a crash (128 and up).
"""
import subprocess
import sys

code = int(sys.argv[1])
assert sys.argv[2] == "--"
result = subprocess.run(sys.argv[3:], stdout=sys.stdout, stderr=sys.stderr)
if result.returncode != code:
    sys.exit(f"expected exit code {code}, got {result.returncode}")
