#!/usr/bin/env python3
"""memopt's rematerialisation against an independent Checkmate MILP.

Checkmate (Jain et al., MLSys 2020, "Checkmate: Breaking the Memory Wall
with Optimal Tensor Rematerialization", section 4) schedules a training
graph of n ops in n stages: stage t computes op t and may recompute any
earlier op first. Binary R[t,i] (op i computed in stage t), S[t,i] (op i's
result kept from stage t-1 into stage t), FREE[t,i,k] (i's result freed
right after op k in stage t) and a continuous U[t,k] (bytes live while op k
runs in stage t):

    R[t,t] = 1
    S[t+1,i] <= S[t,i] + R[t,i]                   (keep only what exists)
    R[t,k] <= R[t,i] + S[t,i]     i a parent of k (inputs exist)
    U[t,0] = static + m_0 R[t,0] + sum_i m_i S[t,i]
    U[t,k] = U[t,k-1] + m_k R[t,k] - sum_{i in parents(k-1)+{k-1}} m_i FREE[t,i,k-1]
    U[t,k] + w_k R[t,k] <= budget                 (w: the op's workspace)
    FREE[t,i,k] = R[t,k] (1 - S[t+1,i]) prod_{j child of i, k<j<=t} (1 - R[t,j]),
        linearised with h = (1 - R[t,k]) + S[t+1,i] + sum_j R[t,j]:
        1 - FREE <= h,  kappa (1 - FREE) >= h
    minimise sum_{t,i} flops_i R[t,i]

written here from the paper, not from memopt's code, as a CPLEX LP file and
solved by COIN-OR CBC's command-line solver (Debian's coinor-cbc; memopt's
own exact model is a different formulation over forward ops only, solved
through the CBC library). The graph is memopt's own: `memopt-report
graph=true` after `--memopt-autodiff` and `--memopt-schedule` gives every op
with its operands, allocated bytes, workspace and FLOPs, in the order the
step runs; views (reshapes) are folded into the op they view, arguments are
static memory, constants are ops of no cost (live until their last reader,
as memopt counts them). Both sides count bytes the same way (a value
lives from its op to its last reader; arguments and constants throughout),
which the script checks: Checkmate's no-recompute schedule must have exactly
memopt's peak without checkpointing.

For each graph, memopt's checkpointing (strategies none, sqrt, optimal and
budget at a few sizes) gives (peak, recomputed FLOPs) pairs, peak as
`memopt-report` counts it after the schedule (arguments included). For each
pair the MILP answers "recompute at equal memory": the fewest FLOPs any
Checkmate schedule recomputes with the same peak (budget = memopt's peak).
Checkmate keeps memopt's op order; memopt may reorder ops (its scheduler),
which the MILP may not, so either side can win.

    python3 bench/checkmate_milp.py            # writes bench/results/checkmate_milp.json
    python3 bench/checkmate_milp.py --quick    # one tiny chain, one budget: a smoke test
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "examples", "generate_models.py")

SUITE = [
    ("chain-8", ["mlp", "--image-size", "8", "--classes", "64", "--batch", "256",
                 "--hidden", ",".join(["64"] * 8)]),
    ("mlp", None),  # examples/mlp.mlir
    ("cnn", None),  # examples/cnn.mlir: conv, batch norm, ReLU, pooling
    ("gpt2-2", ["gpt2", "--layers", "2", "--dim", "64", "--heads", "2",
                "--vocab", "128", "--seq", "16", "--batch", "2"]),
    ("lstm-4", ["lstm", "--batch", "4", "--seq", "4"]),
]
QUICK = [("chain-4", ["mlp", "--image-size", "4", "--classes", "8", "--batch", "64",
                      "--hidden", "16,16,16,16"])]


def run(cmd, timeout=600):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.exit(f"checkmate_milp: {' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return p


def report(opt, model, passes, tmp):
    out = os.path.join(tmp, "report.json")
    run([opt, model, "--pass-pipeline=builtin.module(" + ",".join(passes)
         + f",memopt-report{{file={out} graph=true}})", "-o", os.devnull])
    with open(out) as f:
        return json.load(f)


# ---------------------------------------------------------------------------
# The graph
# ---------------------------------------------------------------------------

def build_graph(rep):
    """Nodes in run order, one per op result: (op, bytes, workspace, flops,
    forward, parents). An op's first result carries its FLOPs; its other
    results (a batch norm's running statistics) follow it as nodes of no
    cost that read it, the last one carrying the op's workspace, so each
    result lives and dies on its own, as in memopt."""
    ops = rep["ops"]
    static = rep["arguments_bytes"]
    node_of, alias, nodes = {}, {}, []

    def refs(i, r):
        if (i, r) in alias:
            return alias[(i, r)]
        return [node_of[(i, r)]] if (i, r) in node_of else []

    for o in ops:
        i, name = o["index"], o["op"]
        if name in ("memopt.free", "func.return"):
            continue
        if name == "arith.constant":
            # In the arena from the start of the step to its last reader.
            static -= o["result_bytes"]
        parents = sorted({p for op, r in zip(o["operands"], o["operand_results"])
                          for p in refs(op, r)})
        if name == "memopt.reshape":
            # A view: its readers read what it views.
            alias[(i, 0)] = parents
            continue
        if not o["pure"]:
            sys.exit(f"checkmate_milp: op {i} ({name}) has effects")
        forward = o["forward"] or name == "arith.constant"
        each = o["result_bytes_each"] or [0]
        first = len(nodes)
        for r, b in enumerate(each):
            node_of[(i, r)] = len(nodes)
            nodes.append({"op": name if r == 0 else f"{name}#{r}", "bytes": b,
                          "workspace": o["workspace_bytes"] if r == len(each) - 1 else 0,
                          "flops": o["flops"] if r == 0 else 0, "forward": forward,
                          "parents": parents if r == 0 else [first]})
    # The returned values (the loss, the updated parameters) live to the
    # end: a last node reads them.
    returned = sorted({p for i, r in zip(rep["results"], rep["result_numbers"])
                       if i is not None for p in refs(i, r)})
    nodes.append({"op": "func.return", "bytes": 0, "workspace": 0, "flops": 0,
                  "forward": False, "parents": returned})
    return static, nodes


def no_recompute_peak(static, nodes):
    """The peak of running each node once, in order, freeing each result
    after its last reader: what memopt's report counts."""
    last = {}
    for k, n in enumerate(nodes):
        for p in n["parents"]:
            last[p] = k
    live, peak = static, static
    for k, n in enumerate(nodes):
        live += n["bytes"]
        peak = max(peak, live + n["workspace"])
        for i in set(n["parents"]) | {k}:
            if last.get(i, k) == k:
                live -= nodes[i]["bytes"]
    return peak


# ---------------------------------------------------------------------------
# The MILP, as an LP file for cbc
# ---------------------------------------------------------------------------

def write_lp(path, static, nodes, budget):
    n = len(nodes)
    m = [x["bytes"] for x in nodes]
    children = [[] for _ in range(n)]
    for k, x in enumerate(nodes):
        for p in set(x["parents"]):
            children[p].append(k)
    binaries, rows = [], []

    def R(t, i):
        """R[t,i]'s name, or None where it is 0: only forward ops are
        recomputed (memopt's checkpointing recomputes forward ops only);
        every op runs in its own stage."""
        return f"R_{t}_{i}" if i == t or nodes[i]["forward"] else None

    S = lambda t, i: f"S_{t}_{i}"
    F = lambda t, i, k: f"F_{t}_{i}_{k}"
    U = lambda t, k: f"U_{t}_{k}"

    def terms(*pairs):
        """' + c v' for each (c, v) with v a variable and c nonzero."""
        out = ""
        for coef, var in pairs:
            if var is None or coef == 0:
                continue
            out += f" {'+' if coef > 0 else '-'} {abs(coef)} {var}"
        return out

    obj = []
    for t in range(n):
        for i in range(t + 1):
            if R(t, i):
                binaries.append(R(t, i))
                if nodes[i]["flops"]:
                    obj.append(f"{nodes[i]['flops']} {R(t, i)}")
        for i in range(t):
            binaries.append(S(t, i))
    count = 0

    def row(expr, sense, rhs):
        nonlocal count
        rows.append(f" c{count}:{expr} {sense} {rhs}")
        count += 1

    for t in range(n):
        row(terms((1, R(t, t))), "=", 1)
        if t + 1 < n:
            for i in range(t + 1):
                row(terms((1, S(t + 1, i)), (-1, R(t, i)),
                          (-1, S(t, i) if i < t else None)), "<=", 0)
        for k in range(t + 1):
            if not R(t, k):
                continue
            for i in set(nodes[k]["parents"]):
                row(terms((1, R(t, k)), (-1, R(t, i)),
                          (-1, S(t, i) if i < t else None)), "<=", 0)
        # Memory.
        row(terms((1, U(t, 0)), (-m[0], R(t, 0)),
                  *[(-m[i], S(t, i)) for i in range(t)]), "=", static)
        for k in range(t + 1):
            if k > 0:
                freed = [(m[i], F(t, i, k - 1))
                         for i in set(nodes[k - 1]["parents"]) | {k - 1}
                         if m[i] and R(t, k - 1)]
                row(terms((1, U(t, k)), (-1, U(t, k - 1)), (-m[k], R(t, k)),
                          *freed), "=", 0)
            if not R(t, k):
                continue
            row(terms((1, U(t, k)), (nodes[k]["workspace"], R(t, k))), "<=", budget)
            for i in set(nodes[k]["parents"]) | {k}:
                if not m[i]:
                    continue
                later = [R(t, j) for j in children[i] if k < j <= t and R(t, j)]
                binaries.append(F(t, i, k))
                hazards = [(-1, R(t, k)),
                           (1, S(t + 1, i) if t + 1 < n else None)]
                hazards += [(1, v) for v in later]
                kappa = 2 + len(later)
                # 1 - F <= h, with h = 1 - R[t,k] + S[t+1,i] + sum R[t,j].
                row(terms((-1, F(t, i, k)), *[(-c, v) for c, v in hazards]),
                    "<=", 0)
                # kappa (1 - F) >= h.
                row(terms((kappa, F(t, i, k)), *hazards), "<=", kappa - 1)
    with open(path, "w") as f:
        f.write("Minimize\n obj: " + (" + ".join(obj) if obj else "0 R_0_0") + "\n")
        f.write("Subject To\n" + "\n".join(rows) + "\n")
        f.write("Bounds\n")
        for t in range(n):
            for k in range(t + 1):
                f.write(f" 0 <= {U(t, k)} <= {budget}\n")
        f.write("Binary\n " + "\n ".join(binaries) + "\nEnd\n")
    return len(binaries), len(rows)


def solve(solver, static, nodes, budget, seconds, tmp):
    if solver == "highs":
        return solve_highs(static, nodes, budget, seconds, tmp)
    return solve_cbc(shutil.which("cbc"), static, nodes, budget, seconds, tmp)


def finish(result, static, nodes, budget, values, objective):
    """Fills in FLOPs and re-runs the schedule the solver returned."""
    total = round(objective)
    forward_once = sum(x["flops"] for x in nodes)
    result["flops"] = total
    result["recompute_flops"] = total - forward_once
    peak, flops = simulate(static, nodes, values)
    result["simulated_peak"] = peak
    if peak > budget or flops != total:
        result["status"] = "invalid"
    return result


def solve_highs(static, nodes, budget, seconds, tmp):
    import highspy
    lp = os.path.join(tmp, "checkmate.lp")
    nbin, nrows = write_lp(lp, static, nodes, budget)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(seconds))
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", 0)
    h.readModel(lp)
    start = time.time()
    h.run()
    result = {"budget": budget, "binaries": nbin, "rows": nrows,
              "solve_seconds": round(time.time() - start, 2),
              "solver": f"HiGHS {h.version()}"}
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    result["status_line"] = status
    if status == "Optimal":
        result["status"] = "optimal"
    elif status == "Infeasible":
        result["status"] = "infeasible"
        return result
    elif info.primal_solution_status == 2:  # a feasible solution in hand
        result["status"] = "time limit"
        result["mip_gap"] = round(info.mip_gap, 4)
    else:
        result["status"] = "no solution in time"
    # What no Checkmate schedule can beat: the solver's proven bound.
    forward_once = sum(x["flops"] for x in nodes)
    result["recompute_lower_bound"] = max(
        0, int(info.mip_dual_bound + 0.5) - forward_once)
    if result["status"] == "no solution in time":
        return result
    names = h.getLp().col_names_
    col = h.getSolution().col_value
    values = {name: round(v) for name, v in zip(names, col)
              if name[:2] in ("R_", "S_")}
    return finish(result, static, nodes, budget, values,
                  info.objective_function_value)


def solve_cbc(cbc, static, nodes, budget, seconds, tmp):
    lp = os.path.join(tmp, "checkmate.lp")
    sol = os.path.join(tmp, "checkmate.sol")
    if os.path.exists(sol):
        os.remove(sol)
    nbin, nrows = write_lp(lp, static, nodes, budget)
    start = time.time()
    p = subprocess.run([cbc, lp, "sec", str(seconds), "threads", "1",
                        "solve", "solu", sol],
                       capture_output=True, text=True, timeout=seconds * 3 + 120)
    elapsed = time.time() - start
    result = {"budget": budget, "binaries": nbin, "rows": nrows,
              "solve_seconds": round(elapsed, 2)}
    if p.returncode != 0 or not os.path.exists(sol):
        result["status"] = "error"
        result["log"] = (p.stdout + p.stderr)[-800:]
        return result
    with open(sol) as f:
        first = f.readline()
    result["status_line"] = first.strip()
    if first.startswith("Optimal"):
        result["status"] = "optimal"
    elif "Infeasible" in first or "infeasible" in first:
        result["status"] = "infeasible"
        return result
    elif "no integer solution" in first:
        result["status"] = "no solution in time"
        return result
    elif "Stopped" in first:
        result["status"] = "time limit"
    else:
        result["status"] = "unknown"
    obj = re.search(r"objective value\s+([-0-9.e+]+)", first)
    if not obj:
        result["status"] = "no solution"
        return result
    result["solver"] = "CBC (command line)"
    values = {}
    with open(sol) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1][:2] in ("R_", "S_"):
                values[parts[1]] = round(float(parts[2]))
    return finish(result, static, nodes, budget, values, float(obj.group(1)))


def simulate(static, nodes, values):
    """Runs the MILP's schedule: stage t keeps the results S[t,.] names and
    computes the ops R[t,.] names in order, freeing a result after its last
    reader in the stage unless stage t+1 keeps it. Returns (peak, FLOPs);
    an input that is not there is an error."""
    n = len(nodes)
    children = [set() for _ in range(n)]
    for k, x in enumerate(nodes):
        for p in x["parents"]:
            children[p].add(k)
    peak, flops = static, 0
    for t in range(n):
        kept = {i for i in range(t) if values.get(f"S_{t}_{i}")}
        run = [i for i in range(t + 1) if values.get(f"R_{t}_{i}")]
        keep_next = {i for i in range(t + 1) if values.get(f"S_{t + 1}_{i}")}
        present = set(kept)
        live = static + sum(nodes[i]["bytes"] for i in kept)
        for pos, k in enumerate(run):
            missing = [p for p in nodes[k]["parents"] if p not in present]
            if missing:
                sys.exit(f"checkmate_milp: stage {t} computes {k} without {missing}")
            present.add(k)
            live += nodes[k]["bytes"]
            flops += nodes[k]["flops"]
            peak = max(peak, live + nodes[k]["workspace"])
            later = set(run[pos + 1:])
            for i in set(nodes[k]["parents"]) | {k}:
                if i in present and i not in keep_next and not (children[i] & later):
                    present.discard(i)
                    live -= nodes[i]["bytes"]
    return peak, flops


# ---------------------------------------------------------------------------
# memopt's side
# ---------------------------------------------------------------------------

def memopt_points(opt, model, tmp, quick):
    configs = [("none", "memopt-autodiff"),
               ("sqrt", "memopt-autodiff,memopt-checkpoint{strategy=sqrt}"),
               ("optimal", "memopt-autodiff,memopt-checkpoint{strategy=optimal}")]
    if quick:
        configs = configs[:2]
    points = []
    for label, passes in configs:
        rep = report(opt, model, passes.split(",") + ["memopt-schedule"], tmp)
        points.append({"memopt": label, "peak_bytes": rep["peak_bytes"],
                       "recompute_flops": rep["recompute_flops"]})
    if not quick:
        none = points[0]["peak_bytes"]
        # Budget mode at fractions of the unconstrained step (budgets count
        # the whole step as the runtime allocates it, so they are given as
        # sizes memopt is then measured against).
        for frac in (0.9, 0.75, 0.6):
            budget = int(none * frac)
            passes = ["memopt-autodiff",
                      f"memopt-checkpoint{{strategy=budget budget={budget}}}",
                      "memopt-schedule"]
            out = os.path.join(tmp, "r.json")
            p = subprocess.run([opt, model, "--pass-pipeline=builtin.module("
                                + ",".join(passes)
                                + f",memopt-report{{file={out} graph=true}})",
                                "-o", os.devnull], capture_output=True, text=True)
            if p.returncode != 0:
                points.append({"memopt": f"budget {frac}", "refused": True})
                continue
            with open(out) as f:
                rep = json.load(f)
            points.append({"memopt": f"budget {frac}", "peak_bytes": rep["peak_bytes"],
                           "recompute_flops": rep["recompute_flops"]})
    return points


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--memopt-opt", help="the memopt-opt to run (default: "
                    "the build's)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seconds", type=int, default=60,
                    help="solver time limit per MILP")
    ap.add_argument("--solver", choices=("auto", "highs", "cbc"), default="auto",
                    help="HiGHS (pip install highspy; stronger, the default "
                         "when installed) or CBC's command-line solver")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results",
                                                  "checkmate_milp.json"))
    args = ap.parse_args()
    opt = args.memopt_opt or os.path.join(args.build, "bin", "memopt-opt")
    solver = args.solver
    if solver == "auto":
        try:
            import highspy  # noqa: F401
            solver = "highs"
        except ImportError:
            solver = "cbc"
    if solver == "cbc" and not shutil.which("cbc"):
        sys.exit("checkmate_milp: the cbc command is missing "
                 "(bash scripts/install-deps.sh installs coinor-cbc)")
    cbc = solver
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, gen in (QUICK if args.quick else SUITE):
            model = os.path.join(tmp, name + ".mlir")
            if gen is None:
                shutil.copy(os.path.join(ROOT, "examples", name + ".mlir"), model)
            else:
                run([sys.executable, GEN] + gen + ["-o", model])
            rep = report(opt, model, ["memopt-autodiff", "memopt-schedule"], tmp)
            static, nodes = build_graph(rep)
            mine = no_recompute_peak(static, nodes)
            if mine != rep["peak_bytes"]:
                sys.exit(f"checkmate_milp: {name}: the graph's peak {mine} is not "
                         f"memopt's {rep['peak_bytes']}: the byte counts differ")
            entry = {"graph": name, "nodes": len(nodes),
                     "forward_backward_flops": sum(x["flops"] for x in nodes),
                     "static_bytes": static, "points": []}
            print(f"{name}: {len(nodes)} ops, no-recompute peak {mine}", flush=True)
            for pt in memopt_points(opt, model, tmp, args.quick):
                if pt.get("refused"):
                    entry["points"].append(pt)
                    continue
                r = solve(cbc, static, nodes, pt["peak_bytes"], args.seconds, tmp)
                pt["checkmate"] = r
                entry["points"].append(pt)
                print(f"  memopt {pt['memopt']}: peak {pt['peak_bytes']}, recompute "
                      f"{pt['recompute_flops']}; checkmate {r['status']} "
                      f"(peak {r.get('simulated_peak')}) "
                      f"{r.get('recompute_flops')} (bound "
                      f"{r.get('recompute_lower_bound')}) in {r['solve_seconds']} s "
                      f"({r['binaries']} binaries)", flush=True)
            rows.append(entry)
    data = {"benchmark": "checkmate_milp", "quick": args.quick,
            "date": time.strftime("%Y-%m-%d"), "solver": solver,
            "time_limit_seconds": args.seconds,
            "suite": rows}
    if not args.quick:
        with open(args.out, "w") as f:
            json.dump(data, f, indent=1)
        print("wrote", args.out)
    else:
        # The smoke test's checks: memopt's no-recompute schedule is a
        # Checkmate schedule, so the MILP at its peak recomputes nothing;
        # at the sqrt schedule's smaller peak the MILP proves an optimum
        # that recomputes something, and its schedule, run again, fits.
        for e in rows:
            none, sqrt = e["points"][0], e["points"][1]
            r = none["checkmate"]
            if r["status"] != "optimal" or r["recompute_flops"] != 0:
                sys.exit(f"checkmate_milp --quick: {e['graph']} none: {r}")
            r = sqrt["checkmate"]
            if not (sqrt["peak_bytes"] < none["peak_bytes"]
                    and r["status"] == "optimal" and r["recompute_flops"] > 0
                    and r["simulated_peak"] <= sqrt["peak_bytes"]):
                sys.exit(f"checkmate_milp --quick: {e['graph']} sqrt: {sqrt}")
        print("checkmate_milp --quick: ok")


if __name__ == "__main__":
    main()
