#===- MemOptStaticLLVM.cmake - link LLVM statically -------------*- cmake -*-===//
#
# Debian's MLIR libraries link the one shared libLLVM.so (150 MB, and it pulls
# in z3, libxml2 and ICU). With MEMOPT_STATIC_LLVM the tools and tests link
# LLVM's static component libraries instead, so that a build can be carried
# to a machine without LLVM installed (the GPU machine has CUDA but no LLVM):
# only the objects used are linked, and the binaries need nothing from LLVM
# at run time.
#
#===----------------------------------------------------------------------===//

set(LLVM_LINK_LLVM_DYLIB OFF)
llvm_map_components_to_libnames(_memopt_llvm_static_libs Support Demangle Remarks)

# z3 is needed only by LLVM's SMT solver interface, which memopt never uses;
# LLVMConfig looks zstd's CMake package up only for static LLVM builds, so
# the plain library stands in for its target.
get_target_property(_memopt_support_deps LLVMSupport INTERFACE_LINK_LIBRARIES)
list(FILTER _memopt_support_deps EXCLUDE REGEX "z3")
find_library(MEMOPT_ZSTD_LIBRARY NAMES zstd libzstd.so.1 REQUIRED)
list(TRANSFORM _memopt_support_deps REPLACE "^zstd::libzstd_shared$"
     "${MEMOPT_ZSTD_LIBRARY}")
set_target_properties(LLVMSupport PROPERTIES
  INTERFACE_LINK_LIBRARIES "${_memopt_support_deps}")

# Every imported MLIR library names the shared `LLVM`; point them at the
# static components instead.
get_directory_property(_memopt_imported IMPORTED_TARGETS)
foreach(_t IN LISTS _memopt_imported)
  if(NOT _t MATCHES "^MLIR")
    continue()
  endif()
  get_target_property(_deps ${_t} INTERFACE_LINK_LIBRARIES)
  if(NOT _deps)
    continue()
  endif()
  list(FIND _deps LLVM _at)
  if(_at EQUAL -1)
    continue()
  endif()
  list(REMOVE_ITEM _deps LLVM)
  list(APPEND _deps ${_memopt_llvm_static_libs})
  set_target_properties(${_t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_deps}")
endforeach()
