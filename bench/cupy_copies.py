"""CuPy's copies of pageable NumPy arrays, for bench/staging.js's CuPy figures (issue 32).

python3 bench/cupy_copies.py BYTES... prints one JSON object: {"cupy": version, "H": {bytes: GB/s},
"D": {bytes: GB/s}}, the median of as many copies as bench/staging.js takes of each size, after a
warm-up copy: host to device by ndarray.set(array), device to host by ndarray.get(out=array),
the device synchronized around each (what the user waits for).
"""
import json
import sys
import time

import cupy
import numpy


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def main():
    sizes = [int(arg) for arg in sys.argv[1:]]
    host = numpy.ones(max(sizes), dtype=numpy.uint8)
    device = cupy.empty(max(sizes), dtype=cupy.uint8)
    figures = {"cupy": cupy.__version__, "H": {}, "D": {}}
    for size in sizes:
        h, d = host[:size], device[:size]
        samples = max(5, min(41, round(2**31 / size)))
        for direction in "HD":
            times = []
            for _ in range(samples + 1):
                cupy.cuda.Device().synchronize()
                start = time.perf_counter()
                if direction == "H":
                    d.set(h)
                else:
                    d.get(out=h)
                cupy.cuda.Device().synchronize()
                times.append(time.perf_counter() - start)
            figures[direction][size] = size / median(times[1:]) / 1e9
    print(json.dumps(figures))


main()
