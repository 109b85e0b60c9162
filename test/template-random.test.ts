/**
 * Random templates: a grammar (test/helpers/template-grammar.ts) makes small templates with a
 * fixed seed; each renders through the engine and through Python Jinja2 configured as
 * transformers configures it, over the same context. The incremental fuzzer's template families
 * (test/helpers/template-fuzz.mjs: loop-scope variables, namespaces, loop.* reads, identity and
 * equality tests over messages) render the same way over states of its edit scripts. Same text where Jinja2 renders, and an
 * E_TEMPLATE error where it raises. PROMPTENC_RANDOM_TEMPLATES=n renders n instead of 400,
 * PROMPTENC_RANDOM_SEED another seed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { rng } from '../bench/helpers/conversation.mjs';
import { HAVE_PYTHON_JINJA, Jinja2Oracle, type OracleResult, warnIfNoPython } from './helpers/py-render.js';
import { makeNamespaceTemplate, makeTemplate, script } from './helpers/template-fuzz.mjs';
import { GRAMMAR_CONTEXT, generateTemplates } from './helpers/template-grammar.js';
import { raisesLikeJinja2, renderUnderTest, UNDER_TEST } from './helpers/template-under-test.js';

const COUNT = Number(process.env.PROMPTENC_RANDOM_TEMPLATES ?? 400);
const SEED = Number(process.env.PROMPTENC_RANDOM_SEED ?? 15);
const FUZZ_TEMPLATES = Number(process.env.PROMPTENC_FUZZ_TEMPLATES ?? 150);
const oracle = HAVE_PYTHON_JINJA ? new Jinja2Oracle() : undefined;
afterAll(() => oracle?.close());
warnIfNoPython('the random-template differential test (test/template-random.test.ts)');

/** Same text where Jinja2 renders, a matching error where it raises. */
function compare(what: string, cases: Array<{ template: string; context: Record<string, unknown>; expected: OracleResult }>): void {
  const problems: string[] = [];
  let rendered = 0;
  cases.forEach(({ template: t, context, expected: py }, i) => {
    const ours = renderUnderTest(t, structuredClone(context));
    const shown = 'text' in ours ? JSON.stringify(ours.text) : `${ours.code}: ${ours.message}`;
    if ('text' in py) {
      rendered++;
      if ('text' in ours && ours.text === py.text) return;
      problems.push(`#${i} ${JSON.stringify(t)}\n   Jinja2: ${JSON.stringify(py.text)}\n   ours:   ${shown}`);
    } else if (!raisesLikeJinja2(py.type, ours)) {
      problems.push(`#${i} ${JSON.stringify(t)}\n   Jinja2 raised ${py.type}: ${py.error}\n   ours:   ${shown}`);
    }
  });
  // The generators are typed so that most templates render; one that only makes errors tests little.
  expect(rendered).toBeGreaterThan(cases.length * 0.5);
  for (const p of problems.slice(0, process.env.PROMPTENC_RANDOM_LIST ? undefined : 30)) console.warn(p);
  expect(problems.length, `${what}: ${problems.length} of ${cases.length} differ from Jinja2`).toBe(0);
}

describe.skipIf(!HAVE_PYTHON_JINJA)(`${COUNT} random templates (seed ${SEED}) vs Python Jinja2 on ${UNDER_TEST}`, () => {
  it('grammar templates render as Jinja2 renders, and raise where it raises', async () => {
    const templates = generateTemplates(SEED, COUNT);
    const expected = await oracle!.render(templates.map((template) => ({ kind: 'template' as const, template, context: GRAMMAR_CONTEXT })));
    compare(
      'random templates',
      templates.map((t, i) => ({ template: t, context: GRAMMAR_CONTEXT, expected: expected[i]! })),
    );
  });

  it("the incremental fuzzer's template families render as Jinja2 renders", async () => {
    const cases: Array<{ template: string; context: Record<string, unknown> }> = [];
    for (let seed = 0; seed < FUZZ_TEMPLATES; seed++) {
      const r = rng(1000 + seed);
      const template = seed % 3 === 0 ? makeNamespaceTemplate(r) : makeTemplate(r, seed % 2 === 1);
      let step = 0;
      for (const { messages, agp } of script(r, 9, 2)) {
        // JSON copies: the script edits its lists in place later on.
        if (++step % 3 === 0) cases.push({ template, context: { messages: JSON.parse(JSON.stringify(messages)), add_generation_prompt: agp } });
      }
    }
    const expected = await oracle!.render(cases.map((c) => ({ kind: 'template' as const, template: c.template, context: c.context })));
    compare(
      'fuzzer families',
      cases.map((c, i) => ({ ...c, expected: expected[i]! })),
    );
  });
});
