# Read by ctest after sketch_cuda_test's discovered tests (see CMakeLists.txt): the suite
# SketchCudaHost runs on the host alone and is labelled cpu, every other test of that executable
# gpu (ctest adds the directory's label sketch to all): `ctest -N -L cpu` lists the
# SketchCudaHost tests and `-L gpu` none of them.
foreach(test IN LISTS sketch_cuda_tests)
  if(test MATCHES "^SketchCudaHost\\.")
    set_tests_properties(${test} PROPERTIES LABELS cpu)
  else()
    set_tests_properties(${test} PROPERTIES LABELS gpu)
  endif()
endforeach()
