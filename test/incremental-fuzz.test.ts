/**
 * Incremental rendering against full renders on random templates and random edit scripts
 * (test/helpers/template-fuzz.mjs). Seeds are fixed, so a failure names its seed; the case's
 * template and edit history are in the assertion message.
 */
import { expect, it } from 'vitest';
import { compileTemplate, RenderMemo } from '../src/template/render.js';
import { runCase } from './helpers/template-fuzz.mjs';

const lib = { compileTemplate, RenderMemo };

function check(seeds: Iterable<number>, mode: 'cache' | 'kwargs', start: number, extra: boolean | 'namespace' = false): number {
  let reused = 0;
  for (const seed of seeds) {
    const r = runCase(lib, seed, 25, mode, start, extra) as { ok?: boolean; reused?: number };
    if (!r.ok) expect(r, `seed ${seed} (${mode}, ${start} messages first)`).toEqual({ ok: true });
    reused += r.reused ?? 0;
  }
  return reused;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

it('random templates and edits: incremental render equals a full render (1,000 cases)', () => {
  // Reuse must actually happen, or this tests nothing about it.
  expect(check(range(0, 1000), 'cache', 1)).toBeGreaterThan(10_000);
});

it('the seeds that caught a stale loop-scope snapshot (scopeNow not updated after an evaluated iteration)', () => {
  expect(check([71, 502, 651, 949, 1502, 1542, 1611, 1858, 2009, 2109, 2161, 2433, 2749], 'cache', 1)).toBeGreaterThan(0);
});

it('longer conversations passed as kwargs.messages (no message cache: positions looked up, maps built)', () => {
  expect(check(range(0, 150), 'kwargs', 5)).toBeGreaterThan(1_000);
  expect(check(range(0, 40), 'cache', 35)).toBeGreaterThan(1_000);
});

it('templates that read later messages by position or a namespace whole (400 cases)', () => {
  // What a loop's shared prefix is reused under (reusablePrefix): these reads must end it.
  expect(check(range(0, 400), 'cache', 3, true)).toBeGreaterThan(2_000);
});

it('namespace key orders: keys created mid-loop, read before written, created before the loop in varying order, printed whole (600 cases)', () => {
  // The family that found two key-order bugs of the reused prefix (keys restored in first-event
  // order; the same values in another order at the loop's start taken as unchanged).
  expect(check(range(0, 600), 'cache', 3, 'namespace')).toBeGreaterThan(10_000);
});
