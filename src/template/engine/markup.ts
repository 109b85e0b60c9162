import { boundSize, dictEntries, isDict, Markup, PyTuple, str, tuple, unmark } from './values.js';

/**
 * markupsafe.Markup's behaviour (markupsafe/__init__.py) over the engine's values: what a
 * string marked safe (escape/e/forceescape/safe, often `tojson | safe`) does differently from a
 * plain str. Everything else treats it as its text (values.ts unmark).
 */

export function htmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;');
}

/** markupsafe.escape: Markup stays as it is; anything else is str()-ed and escaped. */
export function escapeMarkup(v: unknown): Markup {
  return v instanceof Markup ? v : new Markup(htmlEscape(str(v)));
}

/** Markup methods that return Markup (the rest are str's, on the text, with plain results). */
const KEEPS = new Set([
  'capitalize',
  'title',
  'lower',
  'upper',
  'replace',
  'ljust',
  'rjust',
  'lstrip',
  'rstrip',
  'center',
  'strip',
  'translate',
  'expandtabs',
  'swapcase',
  'zfill',
  'casefold',
  'removeprefix',
  'removesuffix',
  'partition',
  'rpartition',
  'split',
  'rsplit',
  'splitlines',
  'join',
  'format',
  'format_map',
]);

type StrMethod = (s: string, name: string, args: unknown[], kwargs: Map<string, unknown> | null) => unknown;

/** `markup.name(args)`: str's method on the text, its string arguments escaped where Markup escapes them, its result marked. */
export function markupMethod(m: Markup, name: string, args: unknown[], kwargs: Map<string, unknown> | null, strMethod: StrMethod): unknown {
  if (!KEEPS.has(name)) return strMethod(m.s, name, args.map(unmark), kwargs);
  let a = args.map(unmark);
  let kw = kwargs;
  if (name === 'replace' && args.length > 1) a[1] = escapeMarkup(args[1]).s;
  else if ((name === 'ljust' || name === 'rjust' || name === 'center') && args.length > 1) a[1] = escapeMarkup(args[1]).s;
  else if (name === 'join') a = [Array.from(iterText(args[0]), (x) => escapeMarkup(x).s)];
  else if (name === 'format' || name === 'format_map') {
    a = args.map(escapeArg);
    if (name === 'format_map' && isDict(args[0])) a = [new Map(dictEntries(args[0]).map(([k, v]) => [k, escapeArg(v)]))];
    if (kwargs) kw = new Map([...kwargs].map(([k, v]) => [k, escapeArg(v)]));
  }
  return mark(strMethod(m.s, name, a, kw));
}

function* iterText(v: unknown): Generator<unknown> {
  if (typeof v === 'string') yield* v;
  else if (Array.isArray(v)) yield* v;
  else yield* [v];
}

/** A format argument as Markup's EscapeFormatter / _MarkupEscapeHelper sees it: strings escaped, numbers kept. */
export function escapeArg(v: unknown): unknown {
  return typeof v === 'string' || v instanceof Markup ? escapeMarkup(v).s : v;
}

/** A str result as Markup (lists and tuples of them too, for split and partition). */
export function mark(r: unknown): unknown {
  if (typeof r === 'string') return new Markup(r);
  if (r instanceof PyTuple) return tuple(r.map(mark));
  if (Array.isArray(r)) return r.map(mark);
  return r;
}

/**
 * `a + b`, `a * n`, `a % args` with a Markup operand (Markup.__add__/__radd__/__mul__/__mod__),
 * or undefined when Markup does not take the operation (the caller then raises as for str).
 */
export function markupBinop(op: string, a: unknown, b: unknown, percent: (fmt: string, v: unknown) => string): unknown {
  if (op === '+') {
    if (typeof a !== 'string' && !(a instanceof Markup)) return undefined;
    if (typeof b !== 'string' && !(b instanceof Markup)) return undefined;
    return new Markup(escapeMarkup(a).s + escapeMarkup(b).s);
  }
  if (op === '*') {
    const [m, n] = a instanceof Markup ? [a, b] : [b as Markup, a];
    if (!(typeof n === 'boolean' || (typeof n === 'number' && Number.isInteger(n)))) return undefined;
    boundSize(m.s.length * Math.max(0, Number(n)));
    return new Markup(m.s.repeat(Math.max(0, Number(n))));
  }
  if (op === '%' && a instanceof Markup) {
    const args = b instanceof PyTuple ? tuple(b.map(escapeArg)) : isDict(b) ? b : escapeArg(b);
    return new Markup(percent(a.s, args));
  }
  return undefined;
}
