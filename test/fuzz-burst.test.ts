/**
 * A fixed-seed burst of the differential fuzzer (fuzz/, `npm run fuzz` for long runs): on each
 * model, native == JS == the Rust oracle for every generated case. GLM-4 runs when
 * ../shared/models/glm-4 is present (its tokenizer.json is built from the real vocabulary).
 * A mismatch here is a bug: shrink it with `npm run fuzz -- --model M --seed S` and keep the
 * shrunk case in test/fixtures/regressions/ (fuzz-regressions replays them).
 */
import { describe, expect, it } from 'vitest';
import { loadTokenizer } from '../src/index.js';
import { CaseGenerator } from '../fuzz/generate.mjs';
import { compare, openModel } from '../fuzz/differential.mjs';
import { fuzzModels } from '../fuzz/models.mjs';

const CASES = Number(process.env.PROMPTENC_FUZZ_CASES ?? 200);
const SEED = 0x5eed2020;
const models = fuzzModels() as Record<string, string>;
if (!models['glm-4']) console.warn('fuzz-burst: GLM-4 SKIPPED: ../shared/models/glm-4 is absent');

describe(`differential fuzz burst: ${CASES} cases per model, seed ${SEED}`, () => {
  for (const [name, file] of Object.entries(models)) {
    it(name, async () => {
      const model = await openModel(loadTokenizer, name, file);
      const gen = new CaseGenerator(SEED ^ name.length, model.added);
      const bad: Array<{ text: string; oracle: number[]; native: number[]; js: number[] }> = [];
      for (let i = 0; i < CASES; i++) {
        const text = gen.next() as string;
        const r = await compare(model, text);
        if (!r.agree && bad.length < 3) bad.push({ text, oracle: r.oracle, native: r.native, js: r.js });
      }
      expect(bad).toEqual([]);
    });
  }
});
