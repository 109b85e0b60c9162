#!/usr/bin/env node
// npm `install` script: builds build/Release/promptenc.node with cmake-js (offline:
// package.json "binary.napi_versions" makes cmake-js use node-api-headers).
// Never fails the install: without cmake or a compiler it prints ONE warning line
// and exits 0, and promptenc uses its JS backend. PROMPTENC_SKIP_NATIVE=1 skips it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const warn = (why) => {
  console.warn(
    `promptenc: warning: native addon not built (${why}); using the JS backend. ` + 'Install cmake and a C++17 compiler, then run `npm run build:native`.',
  );
  process.exit(0);
};

if (process.env.PROMPTENC_SKIP_NATIVE === '1') {
  console.log('promptenc: PROMPTENC_SKIP_NATIVE=1, skipping the native build');
  process.exit(0);
}
const cmake = spawnSync('cmake', ['--version'], { stdio: 'ignore' });
if (cmake.error || cmake.status !== 0) warn('cmake not found');

const bin = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'cmake-js.cmd' : 'cmake-js');
let cmd = bin;
let args = ['rebuild', '--CDCMAKE_BUILD_TYPE=Release'];
if (!existsSync(bin)) {
  // Installed as a dependency: cmake-js may be hoisted next to us.
  try {
    const { createRequire } = await import('node:module');
    cmd = process.execPath;
    args = [createRequire(import.meta.url).resolve('cmake-js/bin/cmake-js'), ...args];
  } catch {
    warn('cmake-js not found');
  }
}
const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', shell: process.platform === 'win32' });
if (r.error || r.status !== 0) {
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`
    .split('\n')
    .filter((l) => /error/i.test(l))
    .slice(0, 1)
    .join(' ')
    .trim();
  warn(`build failed${out ? `: ${out.slice(0, 200)}` : r.error ? `: ${r.error.message}` : ''}`);
}
if (!existsSync(join(root, 'build', 'Release', 'promptenc.node'))) warn('build produced no promptenc.node');
console.log('promptenc: native addon built at build/Release/promptenc.node');
