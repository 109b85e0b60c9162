// Question: what does one encode() of a short (~20-byte) string cost, i.e. the fixed
// per-call overhead that dominates chat-sized inputs? Native (N-API crossing) vs js vs peers.
// Control: a JS call that only measures the string (Buffer.byteLength), the floor of any
// call that looks at its input. 1,000 distinct strings rotate, so word caches do not see
// one string over and over. Engines alternate in ~100 ms turns; median µs per call.
import { loadEngines, seededRandom, spread } from 'promptenc/bench';
import { envNumber, f, jsonOutPath, machine, table, writeJson } from './_common.mjs';

const MODEL = process.env.BENCH_CALL_MODEL ?? 'gpt-4o';
const seconds = envNumber('BENCH_SECONDS', 2);
const rand = seededRandom(42);
const words = 'the a to of and is in it you that for on with as this be at by not are from or have an they which one'.split(' ');
const strings = [];
while (strings.length < 1000) {
  let s = '';
  while (Buffer.byteLength(s) < 18) s += `${words[Math.floor(rand() * words.length)]} `;
  s += String(Math.floor(rand() * 100));
  strings.push(s);
}
const avgBytes = strings.reduce((n, s) => n + Buffer.byteLength(s), 0) / strings.length;

const { slots } = await loadEngines(MODEL, ['promptenc-native', 'promptenc-js', 'tiktoken', 'gpt-tokenizer', 'ai-tokenizer', 'hf-tokenizers']);
const engines = slots.filter((s) => s.status === 'ok');
const control = { name: 'control: Buffer.byteLength', async: false, encode: (s) => ({ length: Buffer.byteLength(s) }) };
const all = [control, ...engines];

let sink = 0;
async function turn(e, ms) {
  const t0 = process.hrtime.bigint();
  const end = t0 + BigInt(ms * 1e6);
  let calls = 0;
  let i = calls;
  do {
    // 100 calls between clock reads, so the clock is not what we measure.
    for (let k = 0; k < 100; k++) {
      const r = e.encode(strings[i]);
      sink += (e.async ? await r : r).length;
      i = i === 999 ? 0 : i + 1;
    }
    calls += 100;
  } while (process.hrtime.bigint() < end);
  return Number(process.hrtime.bigint() - t0) / 1e3 / calls;
}

const samples = new Map(all.map((e) => [e.name, []]));
for (const e of all) await turn(e, 100); // warm-up
const rounds = Math.max(5, Math.round((seconds * 1000) / 100));
for (let r = 0; r < rounds; r++) for (const e of all) samples.get(e.name).push(await turn(e, 100));

const med = (name) => spread(samples.get(name)).median;
const base = engines.find((e) => e.name === 'promptenc-native') ?? engines.find((e) => e.name === 'promptenc-js');
const rows = all.map((e) => {
  const s = spread(samples.get(e.name));
  return [
    e.name,
    e.version ?? '',
    `${f(s.median, 2)} [${f(s.q1, 2)}–${f(s.q3, 2)}]`,
    f(1e6 / s.median / 1e3, 0),
    base ? `${f(s.median / med(base.name), 1)}×` : '–',
  ];
});
for (const m of slots.filter((s) => s.status !== 'ok')) rows.push([m.name, m.version ?? '', `missing: ${m.reason}`, '', '']);
console.log(`### Per-call cost, ~${f(avgBytes, 0)}-byte strings (${MODEL})\n`);
console.log(table(['engine', 'version', 'µs/call median [IQR]', 'k calls/s', `÷ ${base?.name ?? 'promptenc'}`], rows));
console.log(`\n(sink ${sink % 10}) hf-tokenizers' encode is async only: its figure includes a promise round trip through the libuv pool.`);
writeJson(jsonOutPath(), {
  bench: 'call-overhead',
  machine: machine(),
  model: MODEL,
  avgBytes,
  results: all.map((e) => ({ name: e.name, version: e.version, usPerCall: spread(samples.get(e.name)) })),
  missing: slots.filter((s) => s.status !== 'ok'),
});
for (const e of engines) e.dispose?.();
