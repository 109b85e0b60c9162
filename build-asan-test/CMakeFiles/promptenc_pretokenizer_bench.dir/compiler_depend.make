# Empty compiler generated dependencies file for promptenc_pretokenizer_bench.
# This may be replaced when dependencies are built.
