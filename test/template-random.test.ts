/**
 * Random templates: a grammar (test/helpers/template-grammar.ts) makes small templates with a
 * fixed seed; each renders through the engine and through Python Jinja2 configured as
 * transformers configures it, over the same context. Same text where Jinja2 renders, and an
 * E_TEMPLATE error where it raises. PROMPTENC_RANDOM_TEMPLATES=n renders n instead of 400,
 * PROMPTENC_RANDOM_SEED another seed.
 *
 * On the fallback renderer (@huggingface/jinja, before src/template/engine exists) the
 * divergences are counted and printed, not gated: they are issue 15's evidence.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { HAVE_PYTHON_JINJA, Jinja2Oracle, warnIfNoPython } from './helpers/py-render.js';
import { GRAMMAR_CONTEXT, generateTemplates } from './helpers/template-grammar.js';
import { raisesLikeJinja2, renderUnderTest, UNDER_TEST, USING_ENGINE } from './helpers/template-under-test.js';

const COUNT = Number(process.env.PROMPTENC_RANDOM_TEMPLATES ?? 400);
const SEED = Number(process.env.PROMPTENC_RANDOM_SEED ?? 15);
const oracle = HAVE_PYTHON_JINJA ? new Jinja2Oracle() : undefined;
afterAll(() => oracle?.close());
warnIfNoPython('the random-template differential test (test/template-random.test.ts)');

describe.skipIf(!HAVE_PYTHON_JINJA)(`${COUNT} random templates (seed ${SEED}) vs Python Jinja2 on ${UNDER_TEST}`, () => {
  it('renders as Jinja2 renders, and raises where it raises', async () => {
    const templates = generateTemplates(SEED, COUNT);
    const expected = await oracle!.render(templates.map((template) => ({ kind: 'template' as const, template, context: GRAMMAR_CONTEXT })));
    const problems: string[] = [];
    let rendered = 0;
    templates.forEach((t, i) => {
      const py = expected[i]!;
      const ours = renderUnderTest(t, structuredClone(GRAMMAR_CONTEXT));
      if ('text' in py) {
        rendered++;
        if ('text' in ours && ours.text === py.text) return;
        problems.push(
          `#${i} ${JSON.stringify(t)}\n   Jinja2: ${JSON.stringify(py.text)}\n   ours:   ${'text' in ours ? JSON.stringify(ours.text) : `${ours.code}: ${ours.message}`}`,
        );
      } else if (!raisesLikeJinja2(py.type, ours)) {
        problems.push(
          `#${i} ${JSON.stringify(t)}\n   Jinja2 raised ${py.type}: ${py.error}\n   ours:   ${'text' in ours ? JSON.stringify(ours.text) : `${ours.code}: ${ours.message}`}`,
        );
      }
    });
    // The grammar is typed so that most templates render; a generator that only makes errors tests little.
    expect(rendered).toBeGreaterThan(COUNT * 0.5);
    if (process.env.PROMPTENC_RANDOM_LIST || USING_ENGINE) for (const p of problems.slice(0, 30)) console.warn(p);
    if (!USING_ENGINE) {
      console.warn(
        `random templates: the fallback renderer diverges from Jinja2 on ${problems.length} of ${COUNT} (${rendered} render in Jinja2); checked exactly once src/template/engine exists`,
      );
      return;
    }
    expect(problems.length, `${problems.length} of ${COUNT} random templates differ from Jinja2`).toBe(0);
  });
});
