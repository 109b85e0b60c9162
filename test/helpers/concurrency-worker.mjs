// One worker of test/concurrency.test.ts: encodes, encodeAsync / encodeBatch and sessions on
// the built library (dist/) until the deadline, against the oracle's ids it is given.
import { parentPort, workerData } from 'node:worker_threads';

const { distIndex, model, texts, expected, sessionPieces, sessionExpected, seed } = workerData;
const { loadTokenizer } = await import(distIndex);

let s = seed >>> 0 || 1;
const next = (n) => {
  s ^= s << 13;
  s >>>= 0;
  s ^= s >>> 17;
  s ^= s << 5;
  s >>>= 0;
  return s % n;
};
const same = (ids, want) => ids.length === want.length && ids.every((x, i) => x === want[i]);
const opts = { addSpecialTokens: false };
const mismatches = [];
const check = (what, i, ids) => {
  if (!same(ids, expected[i]) && mismatches.length < 5) mismatches.push(`${model} ${what} text ${i}`);
};

// One tokenizer that every call shares (sync encodes and the native threads of concurrent
// async calls read the same core), and a second copy of the same model for the sessions.
const shared = await loadTokenizer(model, { backend: 'native' });
const separate = await loadTokenizer(model, { backend: 'native' });
// Loaded: the main thread starts the clock once every worker is.
parentPort.postMessage({ ready: true });
const deadline = await new Promise((resolve) => parentPort.once('message', (m) => resolve(m.deadline)));
let ops = 0;
while (Date.now() < deadline) {
  const a = next(texts.length),
    b = next(texts.length),
    c = next(texts.length);
  const batch = [next(texts.length), next(texts.length), next(texts.length), next(texts.length)];
  const pending = [
    shared.encodeAsync(texts[a], opts),
    shared.encodeAsync(texts[b], opts),
    shared.encodeBatch(
      batch.map((i) => texts[i]),
      { ...opts, threads: 2 },
    ),
  ];
  check('encode', c, shared.encode(texts[c], opts));
  if (shared.count(texts[c], opts) !== expected[c].length && mismatches.length < 5) mismatches.push(`${model} count text ${c}`);
  const session = separate.createSession();
  let text = '';
  sessionPieces.forEach((piece, k) => {
    text += piece;
    if (!same(session.encode(text, opts), sessionExpected[k]) && mismatches.length < 5) mismatches.push(`${model} session step ${k}`);
  });
  const [ra, rb, rbatch] = await Promise.all(pending);
  check('encodeAsync', a, ra);
  check('encodeAsync', b, rb);
  rbatch.forEach((ids, k) => {
    check('encodeBatch', batch[k], ids);
  });
  ops += 9 + sessionPieces.length;
}
parentPort.postMessage({ ops, mismatches });
