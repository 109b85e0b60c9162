file(REMOVE_RECURSE
  "CMakeFiles/promptenc_core_test.dir/native/core/core_test.cc.o"
  "CMakeFiles/promptenc_core_test.dir/native/core/core_test.cc.o.d"
  "promptenc_core_test"
  "promptenc_core_test.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/promptenc_core_test.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
