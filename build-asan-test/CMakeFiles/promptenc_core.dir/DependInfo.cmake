
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/trust20/native/core/added_tokens.cc" "CMakeFiles/promptenc_core.dir/native/core/added_tokens.cc.o" "gcc" "CMakeFiles/promptenc_core.dir/native/core/added_tokens.cc.o.d"
  "/work/wt/trust20/native/core/batch.cc" "CMakeFiles/promptenc_core.dir/native/core/batch.cc.o" "gcc" "CMakeFiles/promptenc_core.dir/native/core/batch.cc.o.d"
  "/work/wt/trust20/native/core/bpe.cc" "CMakeFiles/promptenc_core.dir/native/core/bpe.cc.o" "gcc" "CMakeFiles/promptenc_core.dir/native/core/bpe.cc.o.d"
  "/work/wt/trust20/native/core/encoder.cc" "CMakeFiles/promptenc_core.dir/native/core/encoder.cc.o" "gcc" "CMakeFiles/promptenc_core.dir/native/core/encoder.cc.o.d"
  "/work/wt/trust20/native/core/model_json.cc" "CMakeFiles/promptenc_core.dir/native/core/model_json.cc.o" "gcc" "CMakeFiles/promptenc_core.dir/native/core/model_json.cc.o.d"
  "/work/wt/trust20/native/core/normalize.cc" "CMakeFiles/promptenc_core.dir/native/core/normalize.cc.o" "gcc" "CMakeFiles/promptenc_core.dir/native/core/normalize.cc.o.d"
  "/work/wt/trust20/native/core/vocab_builder.cc" "CMakeFiles/promptenc_core.dir/native/core/vocab_builder.cc.o" "gcc" "CMakeFiles/promptenc_core.dir/native/core/vocab_builder.cc.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
