# -*- Python -*-
# lit configuration for memopt's regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MEMOPT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.memopt_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

# `%python`: a Python that can import numpy and onnx. Debian's python3-numpy
# and python3-onnx (scripts/install-deps.sh) live in /usr/bin/python3's path,
# which may not be the Python CMake found (a pyenv shim earlier in PATH).
import subprocess
for candidate in ["/usr/bin/python3", config.python_executable]:
    if subprocess.run([candidate, "-c", "import numpy, onnx"],
                      stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode == 0:
        config.python_executable = candidate
        break
else:
    lit_config.fatal("no Python can import numpy and onnx: install "
                     "python3-numpy and python3-onnx "
                     "(scripts/install-deps.sh does)")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%memopt_src_root", config.memopt_src_root))
config.substitutions.append(("%memopt_obj_root", config.memopt_obj_root))
config.substitutions.append(
    ("%gen-models",
     "%s %s" % (config.python_executable,
                os.path.join(config.memopt_src_root, "examples",
                             "generate_models.py"))))
config.substitutions.append(
    ("%examples", os.path.join(config.memopt_src_root, "examples")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# `cuda-build`: the CUDA backend was compiled. `cuda`: it also works here, a
# GPU and driver are present (probed by training one step on it); tests
# that need a GPU say `REQUIRES: cuda` and are reported unsupported
# elsewhere.
if config.memopt_cuda_enabled:
    config.available_features.add("cuda-build")
    import subprocess
    probe = subprocess.run(
        [os.path.join(config.memopt_tools_dir, "memopt-run"),
         os.path.join(config.memopt_src_root, "examples", "mlp.mlir"),
         "--device=cuda", "--steps=1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if probe.returncode == 0:
        config.available_features.add("cuda")
    else:
        lit_config.note("no usable CUDA device, GPU tests are unsupported: " +
                        probe.stderr.strip().splitlines()[-1:][0]
                        if probe.stderr.strip() else "no usable CUDA device")

# `mpi`: memopt-run has --ranks (CMake found MPI) and mpirun is here. Ranks
# run on this machine only, as root in CI containers, more of them than
# cores.
import shutil
if config.memopt_mpi_enabled and shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "mpirun --allow-run-as-root --oversubscribe "
                    "--mca btl self,vader"))

# `mimalloc`: the executables link mimalloc (cmake/MemOptMalloc.cmake).
if config.memopt_mimalloc:
    config.available_features.add("mimalloc")

tool_dirs = [config.memopt_tools_dir, config.llvm_tools_dir]
tools = ["memopt-opt", "memopt-translate", "memopt-run", "memopt-capi-test"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# `%onnx-python`, `%make-onnx`: the same Python, which can import onnx. The
# ONNX importer's tests build their models with it.
config.substitutions.append(("%onnx-python", config.python_executable))
config.substitutions.append(
    ("%make-onnx",
     "%s %s" % (config.python_executable,
                os.path.join(config.memopt_src_root, "test", "Target",
                             "ONNX", "Inputs", "make_onnx.py"))))

# `plugin`: MemOptPlugin.so was built (needs Debian's libMLIR.so); tests load
# it into upstream mlir-opt.
plugin = os.path.join(config.memopt_obj_root, "lib", "MemOptPlugin.so")
if os.path.exists(plugin):
    config.available_features.add("plugin")
    config.substitutions.append(("%memopt_plugin", plugin))
    config.substitutions.append(
        ("%upstream_mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))
