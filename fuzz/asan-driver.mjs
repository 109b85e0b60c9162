#!/usr/bin/env node
/**
 * What scripts/test-asan.mjs runs under the sanitized addon (PROMPTENC_NATIVE_PATH): the built
 * library (dist/) on every fuzzed model with backend 'native', a fuzz burst of argv[2] cases
 * per model through every native entry point, compared with the Rust oracle, plus malformed
 * files and hostile lengths. Exits 1 on a mismatch; the sanitizers exit on their own reports.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import tokenizers from 'tokenizers';
import { CaseGenerator } from './generate.mjs';
import { fuzzModels } from './models.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { loadTokenizer } = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href);
const cases = Number(process.argv[2] ?? 2000);
let mismatches = 0;
let total = 0;
const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

for (const [name, file] of Object.entries(fuzzModels())) {
  const tok = await loadTokenizer(file, { backend: 'native' });
  if (tok.backend !== 'native') throw new Error(`${name} is not on the native backend`);
  const oracle = tokenizers.Tokenizer.fromFile(file);
  const added = (JSON.parse(readFileSync(file, 'utf8')).added_tokens ?? []).map((t) => t.content);
  const gen = new CaseGenerator(0xa5a5 ^ name.length, added);
  const batch = [];
  for (let i = 0; i < cases; i++) {
    const text = gen.next();
    const want = (await oracle.encode(text, null, { addSpecialTokens: false })).getIds();
    const got = tok.encode(text, { addSpecialTokens: false });
    if (tok.count(text, { addSpecialTokens: false }) !== want.length || !same(Array.from(got), want)) {
      mismatches++;
      if (mismatches < 5) console.log(`MISMATCH ${name} ${JSON.stringify(text)}`);
    }
    tok.decode(got);
    batch.push([text, want]);
    total++;
  }
  // Off the main thread: encodeAsync and encodeBatch on worker threads of the core.
  const texts = batch.slice(0, 400).map(([t]) => t);
  const async = await Promise.all(texts.slice(0, 50).map((t) => tok.encodeAsync(t, { addSpecialTokens: false })));
  const threaded = await tok.encodeBatch(texts, { addSpecialTokens: false, threads: 4 });
  texts.forEach((t, i) => {
    if (!same(Array.from(threaded[i]), batch[i][1]) || (i < 50 && !same(Array.from(async[i]), batch[i][1]))) mismatches++;
  });
  // Sessions: a growing text encoded incrementally.
  const session = tok.createSession();
  let grown = '';
  for (const [t] of batch.slice(0, 200)) {
    grown += t;
    session.encode(grown, { addSpecialTokens: false });
  }
  // Hostile lengths: long runs the BPE must not go quadratic on.
  for (const run of ['a'.repeat(200_000), ' '.repeat(100_000), '😀'.repeat(50_000), '_'.repeat(100_000)]) tok.encode(run);
  console.log(`${name}: ${cases} cases through the sanitized addon`);
}

// Malformed files through the scanner and the builder.
const dir = mkdtempSync(path.join(os.tmpdir(), 'promptenc-asan-'));
const base = readFileSync(fuzzModels().llama3, 'utf8');
const bad = [base.slice(0, base.length / 2), base.replace('"vocab":{', '"vocab":{"x":4194304,'), base.replace('"merges":["', '"merges":[["a","b"],"'), base.replace(/"vocab":\{"!":0/, '"vocab":{"!":1e3')];
for (const [i, text] of bad.entries()) {
  const f = path.join(dir, `bad${i}.json`);
  writeFileSync(f, text);
  try {
    await loadTokenizer(f, { backend: 'native' });
  } catch (err) {
    if (!err.code) throw err;
  }
}
rmSync(dir, { recursive: true, force: true });
console.log(`asan driver: ${total} cases, ${mismatches} mismatches`);
process.exit(mismatches > 0 ? 1 : 0);
