#!/usr/bin/env node
// Question: what does streaming detokenization cost per generated id, against one decode of the
// whole output (the floor) and against the naive loop that re-decodes everything each step?
// Control: decode(allIds) once, same tokenizer, same run. Run: npm run build && node bench/decoder.mjs
import { loadTokenizer } from '../dist/index.js';

const text = 'Hello 👋 world! 你好，世界。 Streaming tokens one at a time: é, ß, 🧑🏽‍💻, ｶﾀｶﾅ. '.repeat(2000);
const best = (f, n = 5) => {
  let t = Infinity;
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    f();
    t = Math.min(t, Number(process.hrtime.bigint() - t0));
  }
  return t;
};
for (const backend of ['native', 'js']) {
  const tok = await loadTokenizer('qwen3', { backend });
  const ids = tok.encode(text, { addSpecialTokens: false });
  const whole = best(() => tok.decode(ids));
  {
    const d = tok.createDecoder();
    let out = '';
    for (let i = 0; i < ids.length; i++) out += d.push(ids.subarray(i, i + 1));
    if (out + d.flush() !== tok.decode(ids)) throw new Error('stream != decode');
  }
  // Timed without joining the deltas (a server sends each one on).
  const stream = best(() => {
    const d = tok.createDecoder();
    let n = 0;
    for (let i = 0; i < ids.length; i++) n += d.push(ids.subarray(i, i + 1)).length;
    return n + d.flush().length;
  }, 3);
  const naiveN = 3000;
  const naive = best(() => {
    let prev = '';
    for (let i = 1; i <= naiveN; i++) prev = tok.decode(ids.subarray(0, i));
    return prev;
  }, 1);
  const per = (ns, n) => (ns / n).toFixed(0);
  console.log(
    `${backend}: ${ids.length} ids; whole decode ${per(whole, ids.length)} ns/id, stream (1 id per push) ${per(stream, ids.length)} ns/id ` +
      `(${(stream / whole).toFixed(1)}x the whole decode); naive re-decode of the first ${naiveN} ids ${per(naive, naiveN)} ns/id`,
  );
}
