#!/usr/bin/env node
// `npm run test:core`: builds the C++ core tests (CMake target promptenc_core_test, no Node
// or N-API involved) into build-test/ and runs them. Without cmake it says so and exits 0,
// as the addon build does: the JS backend then serves, and vitest covers it.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const build = join(root, 'build-test');
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
};

if (spawnSync('cmake', ['--version'], { stdio: 'ignore' }).status !== 0) {
  console.warn('promptenc: C++ core tests SKIPPED: cmake not found');
  process.exit(0);
}
run('cmake', ['-S', root, '-B', build, '-DCMAKE_BUILD_TYPE=Release', '--log-level=WARNING']);
run('cmake', ['--build', build, '--target', 'promptenc_core_test', '--parallel', '2']);
run(join(build, process.platform === 'win32' ? 'Release/promptenc_core_test.exe' : 'promptenc_core_test'), []);
