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

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%memopt_src_root", config.memopt_src_root))
config.substitutions.append(
    ("%gen-models",
     "%s %s" % (config.python_executable,
                os.path.join(config.memopt_src_root, "examples",
                             "generate_models.py"))))
config.substitutions.append(
    ("%examples", os.path.join(config.memopt_src_root, "examples")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

if config.memopt_cuda_enabled:
    config.available_features.add("cuda")

tool_dirs = [config.memopt_tools_dir, config.llvm_tools_dir]
tools = ["memopt-opt", "memopt-translate", "memopt-run"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
