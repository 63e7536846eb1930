# GPU ranks' sums with NCCL (distributed/include/distributed/nccl_sum.hpp): the target
# pagh_distributed_nccl (pagh::distributed_nccl), built when the CUDA backends, MPI (pagh_distributed)
# and NCCL are all found and PAGH_WITH_NCCL is on. NCCL comes with the CUDA toolkit here (nccl.h
# beside the runtime's headers, libnccl beside its libraries); NCCL_ROOT points elsewhere.
# Included from the top-level CMakeLists.txt after distributed/ and sketch/.
set(PAGH_HAVE_NCCL OFF)
if(NOT PAGH_WITH_NCCL)
  message(STATUS "pagh: NCCL sums off (PAGH_WITH_NCCL=OFF)")
  return()
endif()
if(NOT TARGET pagh_distributed OR NOT TARGET pagh_sketch_cuda)
  message(STATUS "pagh: NCCL sums off (they need both MPI and the CUDA backends)")
  return()
endif()
find_path(PAGH_NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
find_library(PAGH_NCCL_LIBRARY nccl HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib lib64)
if(NOT PAGH_NCCL_INCLUDE_DIR OR NOT PAGH_NCCL_LIBRARY)
  message(STATUS "pagh: NCCL sums off: no NCCL found (nccl.h and libnccl; set NCCL_ROOT)")
  return()
endif()
message(STATUS "pagh: NCCL sums on: ${PAGH_NCCL_LIBRARY}")
set(PAGH_HAVE_NCCL ON)

add_library(pagh_distributed_nccl distributed/src/nccl_sum.cpp distributed/src/rank_order_add.cu)
add_library(pagh::distributed_nccl ALIAS pagh_distributed_nccl)
# The host copy of the sum is allocated as the CPU sketch engine allocates sketches (sketch/src/compress/huge_pages.hpp).
target_include_directories(pagh_distributed_nccl PRIVATE ${PAGH_NCCL_INCLUDE_DIR} ${PROJECT_SOURCE_DIR}/sketch/src)
# The library file by its path: nothing to find again where the package is installed.
target_link_libraries(pagh_distributed_nccl PUBLIC pagh_distributed pagh_sketch_cuda PRIVATE CUDA::cudart ${PAGH_NCCL_LIBRARY})
target_compile_definitions(pagh_distributed_nccl PUBLIC PAGH_DISTRIBUTED_HAVE_NCCL=1)
target_compile_options(pagh_distributed_nccl PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
set_target_properties(pagh_distributed_nccl PROPERTIES POSITION_INDEPENDENT_CODE ON CUDA_SEPARABLE_COMPILATION OFF)

# 1..N GPUs: the sketch against the NCCL sums (kept on the device, copied to the host) and the host sum (bench/distributed_gpu_scaling.cpp, under mpirun).
if(PAGH_BUILD_BENCH)
  add_executable(distributed_gpu_scaling bench/distributed_gpu_scaling.cpp)
  target_include_directories(distributed_gpu_scaling PRIVATE ${PAGH_NCCL_INCLUDE_DIR})
  target_link_libraries(distributed_gpu_scaling PRIVATE pagh_distributed_nccl pagh_matrix_io CUDA::cudart ${PAGH_NCCL_LIBRARY})
endif()
