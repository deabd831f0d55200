"""Checks the gpu.binary ops of a module lowered with -remat-lower-cuda: each
holds an NVVM object for the expected chip whose bytes are a CUDA ELF (a
cubin: ELF magic, e_machine EM_CUDA = 190), and every gpu.launch_func names
one of them.

Usage: check_cubins.py LOWERED.mlir CHIP
"""
import re
import sys

path, chip = sys.argv[1:3]
text = open(path).read()
binaries = re.findall(r'gpu\.binary @(\w+)\s+\[#gpu\.object<#nvvm\.target<([^>]*)>.*?bin = "((?:[^"\\]|\\.)*)"', text)
launches = set(re.findall(r"gpu\.launch_func\s+@(\w+)::", text))


def unescape(s):
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i] == "\\" and s[i + 1] in "\\\"":
            out += s[i + 1].encode()
            i += 2
        elif s[i] == "\\":
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
        else:
            out += s[i].encode()
            i += 1
    return bytes(out)


total = 0
for name, target, data in binaries:
    if f'chip = "{chip}"' not in target:
        sys.exit(f"{name}: target <{target}> is not for {chip}")
    cubin = unescape(data)
    if cubin[:4] != b"\x7fELF" or int.from_bytes(cubin[18:20], "little") != 190:
        sys.exit(f"{name}: not a CUDA ELF (cubin)")
    total += len(cubin)
names = {name for name, _, _ in binaries}
if not binaries or not launches <= names:
    sys.exit(f"launches without a cubin: {sorted(launches - names)}")
print(f"{len(binaries)} cubins for {chip}, {len(launches)} launched, {total} bytes")
