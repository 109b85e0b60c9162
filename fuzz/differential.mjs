/**
 * One differential check: a text through the native backend, the JS backend and the Rust
 * oracle (`tokenizers`), encode(text, add_special_tokens=False). Shared by fuzz/run.mjs (on the
 * built library) and the tests (on the sources): the caller passes loadTokenizer.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tokenizers from 'tokenizers';

export const REGRESSIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'regressions');

/**
 * The three encoders of one model. `oracleFile`: the tokenizer.json the oracle reads when
 * promptenc loads another form of the same model (GLM-4's tiktoken rank-file directory).
 */
export async function openModel(loadTokenizer, name, file, oracleFile = file) {
  const native = await loadTokenizer(file, { backend: 'native' });
  const js = await loadTokenizer(file, { backend: 'js' });
  const oracle = tokenizers.Tokenizer.fromFile(oracleFile);
  const json = (await import('node:fs')).readFileSync(oracleFile, 'utf8');
  const added = (JSON.parse(json).added_tokens ?? []).map((t) => t.content);
  return { name, file, native, js, oracle, added };
}

const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

/** The ids of each encoder for `text`, and whether all three agree. */
export async function compare(model, text) {
  const oracle = (await model.oracle.encode(text, null, { addSpecialTokens: false })).getIds();
  const native = Array.from(model.native.encode(text, { addSpecialTokens: false }));
  const js = Array.from(model.js.encode(text, { addSpecialTokens: false }));
  return { agree: same(native, oracle) && same(js, oracle), oracle, native, js };
}

/** Writes a shrunk mismatch where test/fuzz-regressions.test.ts replays it; returns the path. */
export function writeRegression(model, text, result, note = '') {
  const id = createHash('sha1').update(`${model.name}\0${text}`).digest('hex').slice(0, 12);
  const file = path.join(REGRESSIONS_DIR, `${model.name}-${id}.json`);
  const record = {
    model: model.name,
    text,
    codePoints: Array.from(text, (c) => `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`).join(' '),
    oracle: result.oracle,
    foundNative: result.native,
    foundJs: result.js,
    note,
  };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  return file;
}
