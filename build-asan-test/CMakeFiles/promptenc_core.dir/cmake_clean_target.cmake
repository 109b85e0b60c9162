file(REMOVE_RECURSE
  "libpromptenc_core.a"
)
