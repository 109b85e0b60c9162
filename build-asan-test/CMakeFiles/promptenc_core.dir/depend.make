# Empty dependencies file for promptenc_core.
# This may be replaced when dependencies are built.
