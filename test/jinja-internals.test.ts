/**
 * The incremental renderer (src/template/incremental.ts) subclasses @huggingface/jinja's
 * Interpreter and overrides or calls some of its internal methods; render.ts patches two more
 * on each interpreter. They are not public API, so the package is pinned to one exact version
 * and this test fails when an upgrade renames or removes any of them (the subclass would then
 * silently fall back to the base behaviour, or break).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const read = (rel: string): string => readFileSync(fileURLToPath(new URL(rel, import.meta.url)), 'utf8');

/** Methods of the Interpreter subclass (4-space indent in incremental.ts) marked `override`, and the base methods it calls through super. */
function internalMethodsUsed(): string[] {
  const incremental = read('../src/template/incremental.ts');
  const render = read('../src/template/render.ts');
  const names = new Set<string>();
  for (const m of incremental.matchAll(/^ {4}override (\w+)\(/gm)) names.add(m[1]!);
  for (const m of incremental.matchAll(/super\.(evaluate\w*|eval\w*|run)\(/g)) names.add(m[1]!);
  // evalProgram replaces the library's own (run calls it); evaluateBlock and run are called directly.
  for (const name of ['evalProgram', 'evaluateBlock', 'run']) names.add(name);
  // render.ts: the instance patch of `| tojson` (InterpreterInternals).
  const internals = /type InterpreterInternals = \{([^}]*)\}/.exec(render)?.[1] ?? '';
  for (const m of internals.matchAll(/^\s*(\w+)\(/gm)) names.add(m[1]!);
  return [...names].sort();
}

describe('@huggingface/jinja internals the renderer relies on', () => {
  it('the dependency is pinned to the exact installed version', () => {
    const pkg = JSON.parse(read('../package.json')) as { dependencies: Record<string, string> };
    // The package does not export its package.json: read it beside its entry point (dist/).
    const manifest = path.join(path.dirname(require.resolve('@huggingface/jinja')), '..', 'package.json');
    const installed = (JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; version: string }).version;
    expect(pkg.dependencies['@huggingface/jinja']).toBe(installed);
  });

  it('every Interpreter method overridden, patched or called exists on Interpreter.prototype', () => {
    const { Interpreter } = require('@huggingface/jinja') as { Interpreter: { prototype: Record<string, unknown> } };
    const names = internalMethodsUsed();
    // The subclass overrides at least evaluate, evaluateIdentifier, evaluateBinaryExpression and evaluateMacro.
    expect(names).toEqual(
      expect.arrayContaining([
        'applyFilter',
        'evalProgram',
        'evaluate',
        'evaluateArguments',
        'evaluateBinaryExpression',
        'evaluateIdentifier',
        'evaluateMacro',
      ]),
    );
    const missing = names.filter((name) => typeof Interpreter.prototype[name] !== 'function');
    expect(missing).toEqual([]);
  });
});
