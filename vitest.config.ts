import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Loading five real tokenizers (and the Rust oracle for each) takes seconds, not ms.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores: more workers than that only adds memory pressure (each holds vocabularies).
    maxWorkers: 2,
  },
});
