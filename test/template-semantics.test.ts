/**
 * The semantics table: each row of test/fixtures/jinja-semantics.json is a small template and
 * what Python Jinja2 (configured as transformers configures it) rendered or raised for it;
 * scripts/gen-jinja-semantics.py made the file and says how. The engine must give the same text,
 * or raise a PromptencError with code E_TEMPLATE where Jinja2 raised, its message naming the
 * template line Jinja2 names ("line N").
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { raisesLikeJinja2, renderUnderTest, UNDER_TEST } from './helpers/template-under-test.js';

interface Row {
  id: string;
  template: string;
  context?: Record<string, unknown>;
  text?: string;
  error?: string;
  type?: string;
  lineno?: number;
}
const doc = JSON.parse(readFileSync(new URL('./fixtures/jinja-semantics.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
  rows: Row[];
};

function check(row: Row): string | undefined {
  const got = renderUnderTest(row.template, { ...structuredClone(doc.context), ...structuredClone(row.context ?? {}) });
  if (row.text !== undefined) {
    if ('text' in got && got.text === row.text) return undefined;
    return `expected ${JSON.stringify(row.text)}, got ${'text' in got ? JSON.stringify(got.text) : `${got.code}: ${got.message}`}`;
  }
  if (raisesLikeJinja2(row.type, got)) {
    // The error names the template's line, as Jinja2's does: it carries it as templateLine, and
    // the message names it too (except raise_exception's, which is the template's own text).
    if (row.lineno === undefined || !('message' in got)) return undefined;
    const named = /\bline (\d+)\b/.exec(got.message)?.[1];
    if (got.templateLine !== row.lineno) return `Jinja2 raised on line ${row.lineno}; our templateLine is ${got.templateLine}: ${got.message}`;
    const ownText = got.message.startsWith('chat template raised: ');
    return ownText || named === String(row.lineno)
      ? undefined
      : `Jinja2 raised on line ${row.lineno}; our message names ${named ? `line ${named}` : 'no line'}: ${got.message}`;
  }
  return `Jinja2 raised ${row.type}: ${row.error}; got ${'text' in got ? `text ${JSON.stringify(got.text)}` : `${got.code}: ${got.message}`}`;
}

describe(`Jinja2 semantics table (${doc.rows.length} rows) on ${UNDER_TEST}`, () => {
  it.each(doc.rows)('$id: $template', (row) => {
    expect(check(row)).toBeUndefined();
  });
});
