# Empty dependencies file for promptenc_core_test.
# This may be replaced when dependencies are built.
