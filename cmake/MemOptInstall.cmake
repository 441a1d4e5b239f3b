#===- MemOptInstall.cmake - the installable memopt package -----*- cmake -*-===//
#
# `cmake --install build --prefix P` installs:
#   P/bin/            memopt-opt, memopt-translate, memopt-run
#   P/include/        memopt/ (with the generated .inc/.h.inc and the .td
#                     files), memopt-c/, memopt/runtime/, memopt/data/
#   P/lib/            the compiler libraries (static, as MLIR's own),
#                     libmemopt_runtime.a and libmemopt_runtime.so,
#                     libMemOptData.a and MemOptPlugin.so for mlir-opt
#   P/lib/cmake/memopt/MemOptConfig.cmake, exporting MemOpt::<Name> targets
#                     that carry their dependencies.
# Included last from the top-level CMakeLists.txt, once every target exists.
# The libraries are declared with DISABLE_INSTALL so that AddMLIR does not
# put them in MLIR's own export set; they are installed here, in ours.
#
#===----------------------------------------------------------------------===//

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MEMOPT_INSTALL_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/memopt")

# Compiler libraries: target -> exported name (MemOpt::<name>).
set(MEMOPT_COMPILER_LIBRARIES
  MLIRMemOptSupport:Support
  MLIRMemOpt:Dialect
  MLIRMemRT:MemRTDialect
  MLIRMemOptAnalysis:Analysis
  MLIRMemOptTransforms:Transforms
  MLIRMemOptToMemRT:Conversion
  MLIRMemRTToPlan:PlanTarget
  MLIRMemOptONNXImport:ONNXImport
  MLIRMemOptDriver:Driver
  MemOptCAPI:CAPI
)
set(MEMOPT_EXPORTED_TARGETS MemOptRuntime MemOptRuntimeShared MemOptData)
foreach(_entry ${MEMOPT_COMPILER_LIBRARIES})
  string(REPLACE ":" ";" _pair "${_entry}")
  list(GET _pair 0 _target)
  list(GET _pair 1 _export)
  set_target_properties(${_target} PROPERTIES EXPORT_NAME ${_export})
  # In the build tree the include directories are global ones; consumers of
  # the package get the installed headers.
  target_include_directories(${_target} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  list(APPEND MEMOPT_EXPORTED_TARGETS ${_target})
endforeach()
# The OpenBLAS fallback (no pkg-config) is a target of ours.
if(TARGET memopt_blas)
  list(APPEND MEMOPT_EXPORTED_TARGETS memopt_blas)
  set(MEMOPT_CONFIG_BLAS_FALLBACK ON)
else()
  set(MEMOPT_CONFIG_BLAS_FALLBACK OFF)
endif()

install(TARGETS ${MEMOPT_EXPORTED_TARGETS}
  EXPORT MemOptTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(TARGETS memopt-opt memopt-translate memopt-run
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET MemOptPlugin)
  install(TARGETS MemOptPlugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(MEMOPT_HAS_PLUGIN ON)
else()
  set(MEMOPT_HAS_PLUGIN OFF)
endif()

# Headers: the sources', the generated ones, the runtime's and the data
# readers'.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/memopt
                  ${PROJECT_SOURCE_DIR}/include/memopt-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/memopt
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc" PATTERN "*.h"
  PATTERN "CMakeFiles" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/memopt
                  ${PROJECT_SOURCE_DIR}/runtime/data/include/memopt
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

install(EXPORT MemOptTargets
  NAMESPACE MemOpt::
  FILE MemOptTargets.cmake
  DESTINATION ${MEMOPT_INSTALL_CMAKE_DIR})

# What MemOptConfig.cmake needs to find the same dependencies again.
set(MEMOPT_CONFIG_MLIR_DIR "${MLIR_DIR}")
set(MEMOPT_CONFIG_HAS_CUDA ${MEMOPT_ENABLE_CUDA})
set(MEMOPT_CONFIG_CUDNN_LIBRARY "${MEMOPT_CUDNN_LIBRARY}")
set(MEMOPT_CONFIG_CUDNN_INCLUDE_DIR "${MEMOPT_CUDNN_INCLUDE_DIR}")
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/MemOptConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/MemOptConfig.cmake
  INSTALL_DESTINATION ${MEMOPT_INSTALL_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR
            CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/MemOptConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/MemOptConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/MemOptConfigVersion.cmake
  DESTINATION ${MEMOPT_INSTALL_CMAKE_DIR})
