// The benches stand on what a user has: the public entry points (dist/index.js, i.e.
// 'promptenc'; 'promptenc/bench', built into dist/bench; the CLI, dist/cli/main.js), npm
// packages, node builtins and bench/'s own files. They never import test/ or a file of dist/
// that is not an entry point, so a bench keeps measuring the published library and the tests
// can change freely. Tests may import bench/helpers, not the other way round.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const benchDir = path.join(root, 'bench');

/** The scripts, the helpers they import and the harness (bench/lib, which stands on 'promptenc' alone). */
const files = [
  ...readdirSync(path.join(benchDir, 'lib'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `bench/lib/${f}`),
  ...readdirSync(benchDir)
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => `bench/${f}`),
  ...readdirSync(path.join(benchDir, 'helpers'))
    .filter((f) => f.endsWith('.mjs'))
    .map((f) => `bench/helpers/${f}`),
];

/** Paths under the repository root that a bench may name, with why. */
const ALLOWED_PATHS: Array<[RegExp, string]> = [
  [/^dist\/index\.js$/, "the package's main entry ('promptenc')"],
  [/^dist\/cli\/main\.js$/, 'the promptenc command (package.json "bin")'],
  [/^dist\/bench\//, "the harness's build output ('promptenc/bench'): run-all checks that it was built"],
  [/^test\/helpers\/jinja2_oracle\.py$/, 'Python Jinja2, the reference renderer, run as a child process for scale (a peer, not an import)'],
  [/^src\/template\/engine\/index\.ts$/, 'the chat-template engine, not public yet: render-engines.mjs bundles its source to time it'],
  [/^test\/fixtures\/glm-seed\.jinja$/, 'a chat template read as data by bench/helpers/glm-tokenizer.mjs'],
];

function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** Module specifiers: static imports and re-exports, and import() of a string literal. */
function specifiers(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/gm)) out.push(m[1]!);
  for (const m of source.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) out.push(m[1]!);
  for (const m of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]/g)) out.push(m[1]!);
  return out;
}

/** Repository paths a file names outside bench/: relative strings ('../dist/x.js') and path.join(root, 'dist', 'x.js'). */
function namedPaths(file: string, source: string): string[] {
  const out: string[] = [];
  const dir = path.dirname(path.join(root, file));
  for (const m of source.matchAll(/['"`]((?:\.\.\/)+[^'"`$]+)['"`]/g)) out.push(path.relative(root, path.resolve(dir, m[1]!)));
  for (const m of source.matchAll(/path\.join\(\s*root\s*,([^)]*)\)/g)) {
    const parts = [...m[1]!.matchAll(/['"]([^'"]+)['"]/g)].map((p) => p[1]!);
    out.push(parts.join('/'));
  }
  return out
    .map((p) => p.split(path.sep).join('/'))
    .filter((p) => !p.startsWith('bench/') && !p.startsWith('..') && (p.startsWith('dist') || p.startsWith('test') || p.startsWith('src')));
}

describe('bench/*.mjs imports only the public API and bench/', () => {
  it('finds the bench scripts', () => {
    expect(files.length).toBeGreaterThan(10);
    expect(files).toContain('bench/helpers/conversation.mjs');
  });

  it.each(files)('%s', (file) => {
    const source = withoutComments(readFileSync(path.join(root, file), 'utf8'));
    const bad: string[] = [];
    for (const spec of specifiers(source)) {
      if (spec.startsWith('node:')) continue;
      if (spec.startsWith('.')) {
        const target = path
          .relative(root, path.resolve(path.dirname(path.join(root, file)), spec))
          .split(path.sep)
          .join('/');
        if (target.startsWith('bench/') || target === 'dist/index.js') continue;
        bad.push(`import '${spec}' (${target})`);
        continue;
      }
      // A bare specifier: an npm package, or the package itself through its "exports".
      if (spec.startsWith('promptenc') && spec !== 'promptenc' && spec !== 'promptenc/bench') bad.push(`import '${spec}'`);
    }
    for (const p of namedPaths(file, source)) {
      if (!ALLOWED_PATHS.some(([re]) => re.test(p))) bad.push(`names ${p}`);
    }
    expect(bad, `${file} reaches past the public API (allowed: ${ALLOWED_PATHS.map(([, why]) => why).join('; ')})`).toEqual([]);
  });

  it('the checks see a forbidden import', () => {
    const probe = "import { x } from '../test/helpers/a.mjs';\nconst { y } = await import('../dist/offsets.js');\nimport { z } from 'promptenc/dist/x.js';";
    expect(specifiers(probe)).toEqual(['../test/helpers/a.mjs', 'promptenc/dist/x.js', '../dist/offsets.js']);
    expect(namedPaths('bench/x.mjs', "spawn(path.join(root, 'test', 'helpers', 'h.mjs'))")).toEqual(['test/helpers/h.mjs']);
  });
});
