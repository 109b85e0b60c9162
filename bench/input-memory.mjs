// Question: how much memory does one encode take per input byte, at its peak, on the native
// path? (issue 20 item 7: the target is <= 16 B/byte over the input.) Each case runs in a
// fresh process: load, build the text, read max RSS, encode once, read max RSS again; the
// ratio is (peak after - peak before) / UTF-8 bytes. Control: the same bytes as prose with
// spaces (short pieces) next to one repeated character (one piece as long as the input).
// Usage: npx tsc -p tsconfig.json && node bench/input-memory.mjs [MiB]
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './_common.mjs';

const mib = Number(process.argv[2] ?? 8);
const child = `
const { loadTokenizer } = await import(${JSON.stringify(pathToFileURL(path.join(root, 'dist', 'index.js')).href)});
const [model, kind, bytes] = process.argv.slice(1);
const tok = await loadTokenizer(model, { backend: 'native' });
tok.encode('warm up');
const n = Number(bytes);
const text = kind === 'repeat' ? 'a'.repeat(n) : kind === 'digits' ? '7'.repeat(n) : 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45)).slice(0, n);
const before = process.resourceUsage().maxRSS * 1024;
const ids = tok.encode(text, { addSpecialTokens: false });
const after = process.resourceUsage().maxRSS * 1024;
console.log(JSON.stringify({ ids: ids.length, perByte: (after - before) / n }));
`;
console.log(`peak RSS per input byte, ${mib} MiB of text, native backend`);
for (const model of ['gpt-4o', 'llama3', 'qwen3']) {
  for (const kind of ['prose', 'repeat']) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', child, model, kind, String(mib * 1024 * 1024)], {
      encoding: 'utf8',
      env: { ...process.env, PROMPTENC_QUIET: '1' },
    });
    const out = r.stdout.trim() ? JSON.parse(r.stdout.trim()) : { error: r.stderr.slice(0, 200) };
    console.log(`${model.padEnd(8)} ${kind.padEnd(7)} ${out.perByte !== undefined ? `${out.perByte.toFixed(1)} B/byte (${out.ids} ids)` : out.error}`);
  }
}
