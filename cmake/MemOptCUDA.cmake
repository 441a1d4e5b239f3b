#===- MemOptCUDA.cmake - locate CUDA 13, cuBLAS and cuDNN ------*- cmake -*-===//
#
# Enables the CUDA language and defines the imported target memopt::cudnn.
# Included only when MEMOPT_ENABLE_CUDA is ON. No GPU is needed to build.
#
#===----------------------------------------------------------------------===//
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  # H100/H200 are sm_90, A100 sm_80. `native` fails on machines without a GPU.
  set(CMAKE_CUDA_ARCHITECTURES "80;90")
endif()
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

find_path(MEMOPT_CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include /usr/local/cuda/include)
find_library(MEMOPT_CUDNN_LIBRARY cudnn
  HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib /usr/local/cuda/lib64)
if(NOT MEMOPT_CUDNN_INCLUDE_DIR OR NOT MEMOPT_CUDNN_LIBRARY)
  message(FATAL_ERROR "MEMOPT_ENABLE_CUDA is ON but cuDNN was not found; "
                      "install cuDNN 9 or configure with -DMEMOPT_ENABLE_CUDA=OFF")
endif()
add_library(memopt::cudnn UNKNOWN IMPORTED)
set_target_properties(memopt::cudnn PROPERTIES
  IMPORTED_LOCATION "${MEMOPT_CUDNN_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${MEMOPT_CUDNN_INCLUDE_DIR}")
message(STATUS "CUDA backend enabled: nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
               "archs ${CMAKE_CUDA_ARCHITECTURES}, cuDNN ${MEMOPT_CUDNN_LIBRARY}")
