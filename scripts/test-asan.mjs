#!/usr/bin/env node
// `npm run test:asan`: the native core under AddressSanitizer + UndefinedBehaviorSanitizer.
//  1. The C++ core tests (scripts/test-core.mjs's target) built with the sanitizers, into
//     build-asan-test/, and run.
//  2. The addon built with them (cmake-js, into build-asan/), then fuzz/asan-driver.mjs run
//     under it: every fuzzed model loaded natively, a fuzz burst through encode, count,
//     encodeAsync, encodeBatch and decode, malformed files, sessions. Compared with the oracle.
// cmake-js sets CMAKE_CXX_FLAGS itself, so the flags go through a build type of our own
// (Asan: CMAKE_CXX_FLAGS_ASAN and the linker flags of that type). Node is not built with
// ASan: libasan is preloaded, and leak detection is off (Node's own allocations outlive exit;
// test/leak.test.ts measures our memory instead). Any sanitizer report fails the run.
// Usage: npm run test:asan [-- --cases N]   (N cases per model, default 2000)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SAN = '-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined';
const typeFlags = [
  '-DCMAKE_BUILD_TYPE=Asan',
  `-DCMAKE_CXX_FLAGS_ASAN=${SAN}`,
  '-DCMAKE_EXE_LINKER_FLAGS_ASAN=-fsanitize=address,undefined',
  '-DCMAKE_SHARED_LINKER_FLAGS_ASAN=-fsanitize=address,undefined',
  '-DCMAKE_MODULE_LINKER_FLAGS_ASAN=-fsanitize=address,undefined',
];
const env = {
  ...process.env,
  ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=0:halt_on_error=1:exitcode=86',
  UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1:exitcode=87',
};
const run = (cmd, args, extraEnv = {}) => {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...env, ...extraEnv } });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    console.error(`test:asan FAILED (exit ${r.status}${r.status === 86 ? ': AddressSanitizer' : r.status === 87 ? ': UBSan' : ''})`);
    process.exit(r.status ?? 1);
  }
};
// A machine that cannot build or run sanitized code skips, saying why (CI prints it), rather
// than failing: cmake missing, or no ASan/UBSan runtime for the compiler (a probe program
// built and run with the same flags).
const skip = (why) => {
  console.warn(`promptenc: test:asan SKIPPED: ${why}`);
  process.exit(0);
};
if (spawnSync('cmake', ['--version'], { stdio: 'ignore' }).status !== 0) skip('cmake not found');
{
  /** The first line a failed probe step printed, or how it ended. */
  const why = (r) => r.stderr?.trim().split('\n')[0] || r.error?.message || `exit status ${r.status}`;
  const dir = mkdtempSync(join(tmpdir(), 'promptenc-asan-probe-'));
  const cxx = process.env.CXX || 'c++';
  let problem;
  try {
    writeFileSync(join(dir, 'probe.cc'), '#include <vector>\nint main() { std::vector<int> v(4); return v[3]; }\n');
    const built = spawnSync(cxx, [...SAN.split(' '), join(dir, 'probe.cc'), '-o', join(dir, 'probe')], { encoding: 'utf8' });
    if (built.error || built.status !== 0) problem = `${cxx} cannot build with -fsanitize=address,undefined: ${why(built)}`;
    else {
      const ran = spawnSync(join(dir, 'probe'), [], { encoding: 'utf8', env });
      if (ran.error || ran.status !== 0) problem = `a sanitized program does not run here: ${why(ran)}`;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (problem) skip(problem);
}
const t0 = Date.now();
const cases = process.argv.includes('--cases') ? process.argv[process.argv.indexOf('--cases') + 1] : '2000';

// 1. Core tests.
const testBuild = join(root, 'build-asan-test');
run('cmake', ['-S', root, '-B', testBuild, ...typeFlags, '--log-level=WARNING']);
run('cmake', ['--build', testBuild, '--target', 'promptenc_core_test', '--parallel', '2']);
run(join(testBuild, 'promptenc_core_test'), []);

// 2. The addon, and the driver under it.
const out = join(root, 'build-asan');
run(process.execPath, [join(root, 'node_modules', 'cmake-js', 'bin', 'cmake-js'), 'build', '--out', out, ...typeFlags.map((f) => `--C${f.slice(1)}`)]);
const find = (d) => {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    const p = join(d, e.name);
    if (e.isDirectory()) {
      const hit = find(p);
      if (hit) return hit;
    } else if (e.name === 'promptenc.node') return p;
  }
  return undefined;
};
const addon = find(out);
if (!addon || !existsSync(addon)) throw new Error(`no promptenc.node under ${out}`);
const libasan = spawnSync('gcc', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).stdout.trim();
const libubsan = spawnSync('gcc', ['-print-file-name=libubsan.so'], { encoding: 'utf8' }).stdout.trim();
run(process.execPath, [join(root, 'fuzz', 'asan-driver.mjs'), cases], {
  PROMPTENC_NATIVE_PATH: addon,
  LD_PRELOAD: [libasan, libubsan].filter((p) => p.startsWith('/')).join(' '),
  PROMPTENC_QUIET: '1',
});
console.log(`test:asan: no sanitizer reports (${((Date.now() - t0) / 60000).toFixed(1)} min)`);
