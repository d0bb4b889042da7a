# lit configuration for oflow's FileCheck tests.
import os
import lit.formats
from lit.llvm import llvm_config

config.name = "oflow"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "e2e"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.oflow_obj_root, "test")

llvm_config.use_default_substitutions()
# Debian's unversioned LLVM tools are LLVM 14: put LLVM 22's first.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.oflow_tools_dir, append_path=True)
config.environment["PATH"] = os.pathsep.join(
    [config.oflow_tools_dir, config.llvm_tools_dir, config.environment["PATH"]])

config.substitutions.append(("%oflow_src", config.oflow_src_root))
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%nodetests", "/usr/share/libonnx-testdata/data/node"))
# The CUDA toolkit's PTX assembler, to check the PTX the CUDA target emits.
config.substitutions.append(
    ("%ptxas", os.path.join(os.environ.get("CUDA_HOME") or "/usr/local/cuda", "bin", "ptxas")))
