# Included by ctest after sketch_cuda_test's discovered tests (see CMakeLists.txt): the host-only
# tests of that executable carry the label cpu, not gpu (the directory's label sketch is added to
# every test of the directory by ctest).
set_tests_properties(SketchCudaHost.ClusterListsPartitionEveryEntryOnce SketchCudaHost.WideLayoutPlacesEveryEntryOnceInOrder
                     PROPERTIES LABELS cpu)
