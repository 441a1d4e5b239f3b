#!/usr/bin/env python3
"""Checks two memory reports of one graph, without and with --memopt-inplace:
every memopt.relu runs in place in the second (it allocates nothing), and
forward_allocated_bytes falls by exactly the ReLU outputs' bytes."""
import json
import sys

base, inplace = (json.load(open(p)) for p in sys.argv[1:3])
relus = [o for o in inplace["ops"] if o["op"] == "memopt.relu"]
if not relus:
    sys.exit("no memopt.relu in the graph")
missing = [o["loc"] for o in relus if "inplace_operand" not in o]
if missing:
    sys.exit("ReLUs not in place: " + ", ".join(missing))
saved = base["forward_allocated_bytes"] - inplace["forward_allocated_bytes"]
if saved <= 0:
    sys.exit("forward_allocated_bytes did not fall")
print("%d ReLUs in place; forward allocation %d -> %d bytes" %
      (len(relus), base["forward_allocated_bytes"],
       inplace["forward_allocated_bytes"]))
