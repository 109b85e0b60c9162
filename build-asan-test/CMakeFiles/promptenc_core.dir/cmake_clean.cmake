file(REMOVE_RECURSE
  "CMakeFiles/promptenc_core.dir/native/core/added_tokens.cc.o"
  "CMakeFiles/promptenc_core.dir/native/core/added_tokens.cc.o.d"
  "CMakeFiles/promptenc_core.dir/native/core/batch.cc.o"
  "CMakeFiles/promptenc_core.dir/native/core/batch.cc.o.d"
  "CMakeFiles/promptenc_core.dir/native/core/bpe.cc.o"
  "CMakeFiles/promptenc_core.dir/native/core/bpe.cc.o.d"
  "CMakeFiles/promptenc_core.dir/native/core/encoder.cc.o"
  "CMakeFiles/promptenc_core.dir/native/core/encoder.cc.o.d"
  "CMakeFiles/promptenc_core.dir/native/core/model_json.cc.o"
  "CMakeFiles/promptenc_core.dir/native/core/model_json.cc.o.d"
  "CMakeFiles/promptenc_core.dir/native/core/normalize.cc.o"
  "CMakeFiles/promptenc_core.dir/native/core/normalize.cc.o.d"
  "CMakeFiles/promptenc_core.dir/native/core/vocab_builder.cc.o"
  "CMakeFiles/promptenc_core.dir/native/core/vocab_builder.cc.o.d"
  "libpromptenc_core.a"
  "libpromptenc_core.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/promptenc_core.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
