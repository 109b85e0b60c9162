// Eight workers keep encodeAsync / encodeBatch calls in flight; then, by argv[2], the process
// exits ('exit') or the workers are terminated ('terminate'). Exit code 0 unless the addon aborts.
// argv[3]: the built library's dist/index.js as a file URL.
import { Worker } from 'node:worker_threads';

const [mode, distIndex] = process.argv.slice(2);
const source = `
const { parentPort } = require('node:worker_threads');
import(${JSON.stringify(distIndex)}).then(async ({ loadTokenizer }) => {
  const tok = await loadTokenizer('gpt-4o', { backend: 'native' });
  parentPort.postMessage('ready');
  const text = 'hello world e\\u0301 '.repeat(2000);
  for (;;) await Promise.all([tok.encodeAsync(text), tok.encodeBatch([text, text, text], { threads: 2 })]);
});`;
const workers = Array.from({ length: 8 }, () => new Worker(source, { eval: true }));
await Promise.all(workers.map((w) => new Promise((resolve) => w.once('message', resolve))));
await new Promise((resolve) => setTimeout(resolve, 300));
if (mode === 'exit') process.exit(0);
await Promise.all(workers.map((w) => w.terminate()));
console.log('terminated');
