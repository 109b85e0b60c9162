#!/usr/bin/env node
// `npm run format:native` formats the C++ sources of native/ with clang-format (.clang-format);
// `--check` (npm run lint:native) only reports files that differ and exits 1 if any do.
// The generated Unicode tables are left alone (scripts/gen-unicode-tables.mjs writes them).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const files = [];
for (const dir of ['native', 'native/core']) {
  for (const name of readdirSync(join(root, dir))) {
    if (/\.(cc|h)$/.test(name) && name !== 'unicode_tables.h') files.push(join(dir, name));
  }
}
const args = check ? ['--dry-run', '--Werror', '--style=file', ...files] : ['-i', '--style=file', ...files];
// The npm package `clang-format` ships the binary (clang-format 15), so CI needs no system package.
let bin = 'clang-format';
try {
  bin = createRequire(import.meta.url)('clang-format').getNativeBinary();
} catch {
  // not installed (a production install): fall back to the system's clang-format
}
const r = spawnSync(bin, args, { cwd: root, stdio: 'inherit' });
if (r.error) {
  console.error(`promptenc: clang-format not found (${r.error.message}); run npm ci, or on Debian: apt-get install clang-format`);
  process.exit(1);
}
process.exit(r.status ?? 1);
