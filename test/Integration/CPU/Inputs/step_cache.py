"""Acts on remat-run's step cache for remat-run-cache.test.

    step_cache.py entries DIR              prints the number of entries
    step_cache.py corrupt DIR truncate     cuts the one entry in half
    step_cache.py corrupt DIR flip         flips a bit in its middle
    step_cache.py corrupt DIR garbage      replaces it by other bytes
    step_cache.py same DIR1 DIR2           byte-equal entries, same names
    step_cache.py race N REMAT_RUN ARGS... runs N remat-runs at once
"""
import glob
import os
import subprocess
import sys


def entries(d):
    return sorted(glob.glob(os.path.join(d, "*.step")))


def main():
    mode, d = sys.argv[1], sys.argv[2]
    if mode == "entries":
        leftovers = [f for f in os.listdir(d) if not f.endswith(".step")]
        print(f"{len(entries(d))} entries, {len(leftovers)} other files")
    elif mode == "corrupt":
        (path,) = entries(d)
        data = bytearray(open(path, "rb").read())
        how = sys.argv[3]
        if how == "truncate":
            data = data[: len(data) // 2]
        elif how == "flip":
            data[len(data) // 2] ^= 0x10
        else:
            data = bytearray(b"not an entry" * 100)
        open(path, "wb").write(data)
        print(f"corrupted: {how}")
    elif mode == "same":
        a, b = entries(d), entries(sys.argv[3])
        names = [os.path.basename(p) for p in a] == [os.path.basename(p) for p in b]
        same = names and all(open(x, "rb").read() == open(y, "rb").read()
                             for x, y in zip(a, b))
        print("entries byte-equal" if same and a else "entries DIFFER")
    elif mode == "race":
        n, command = int(d), sys.argv[3:]
        procs = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
                 for _ in range(n)]
        outs = [p.communicate()[0] for p in procs]
        codes = [p.returncode for p in procs]
        misses = sum('"cache":"miss"' in o for o in outs)
        hits = sum('"cache":"hit"' in o for o in outs)
        print(f"exit codes {sorted(set(codes))}, {misses + hits} of {n} reported the cache")


main()
