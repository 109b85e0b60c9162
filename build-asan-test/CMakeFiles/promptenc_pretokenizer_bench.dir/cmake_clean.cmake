file(REMOVE_RECURSE
  "CMakeFiles/promptenc_pretokenizer_bench.dir/native/core/pretokenizer_bench.cc.o"
  "CMakeFiles/promptenc_pretokenizer_bench.dir/native/core/pretokenizer_bench.cc.o.d"
  "promptenc_pretokenizer_bench"
  "promptenc_pretokenizer_bench.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/promptenc_pretokenizer_bench.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
