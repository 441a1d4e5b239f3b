"""Validates a memopt-run --trace file against Chrome's trace event format
(what Perfetto and chrome://tracing open) and against memopt-run's output.

Usage: check_trace.py RUN_OUTPUT TRACE.json [--monotonic]
"""
import json
import re
import sys


def main():
    output, path = sys.argv[1], sys.argv[2]
    monotonic = "--monotonic" in sys.argv[3:]
    text = open(output).read()
    m = re.search(r"measured high-water (\d+) bytes = arena (\d+) \+ arguments "
                  r"and constants (\d+) \+ alignment (\d+)", text)
    assert m, "no high-water line"
    high, arena, persistent, padding = map(int, m.groups())
    assert high == arena + persistent + padding, (high, arena, persistent,
                                                  padding)
    assert padding < 64 * 1024, padding

    trace = json.load(open(path))
    events = trace["traceEvents"]
    assert isinstance(events, list) and events
    kernels = [e for e in events if e["ph"] == "X"]
    counters = [e for e in events if e["ph"] == "C"]
    assert any(e["ph"] == "M" for e in events), "no process name"
    for e in kernels:
        for key in ("name", "ts", "dur", "pid", "tid", "args"):
            assert key in e, (key, e)
        assert e["dur"] >= 0 and e["ts"] >= 0
    assert [e["args"]["step"] for e in kernels] == list(range(len(kernels)))
    ts = [e["ts"] for e in kernels]
    assert ts == sorted(ts), "kernel slices out of order"
    assert len(counters) == len(kernels) + 1
    held = [c["args"]["arena"] for c in counters]
    assert max(held) <= trace["otherData"]["arena_bytes"], held
    assert all(c["args"]["persistent"] == persistent for c in counters)
    if monotonic:
        assert held == sorted(held), "a baseline frees nothing"
        # Everything stays held: the last value is every slice, short only of
        # alignment padding.
        assert 0.99 * trace["otherData"]["arena_bytes"] <= held[-1], held[-1]
    print(f"check_trace: {len(kernels)} kernels, peak {max(held)} of "
          f"{trace['otherData']['arena_bytes']} arena bytes")


if __name__ == "__main__":
    main()
