import { pythonJsonString } from '../pyjson.js';
import { FILTERS, type Kw } from './filters.js';
import { callMethod, getitem, slice } from './methods.js';
import { binop, cmp, Run, type TemplateLimits } from './runtime.js';
import { ContentUnsafeError, isDict, isInt, iterate, num, ProvStr, PyTuple, str, TextMap, truthy } from './values.js';

/**
 * Provenance: which characters of the output came from the caller's text (message content,
 * tool results, reasoning, tool-call arguments), for encodeChat's contentSpecialTokens 'text'.
 *
 * Only an Engine compiled with `provenance: true` runs this code; the default compile never
 * reaches it. Caller text enters the render as ProvStr values (values.ts); the compiled
 * template routes output, concatenation, comparison, tests, filters, methods, items and slices
 * through the functions here, which follow the characters where every character of the result
 * still comes from one input character (concatenation, strip/lstrip/rstrip/trim, slicing and
 * indexing, split/rsplit parts, replace, removeprefix/removesuffix, join, `|string`, the body of
 * a tojson string, set blocks and macro output), compute plain answers where the result holds no
 * text (length, startswith, `in`, `==`, tests), and refuse (ContentUnsafeError, E_CONTENT_UNSAFE)
 * everywhere else: upper/lower/title/format/indent/center/escape/..., iterating over the
 * characters, repr of a container that holds caller text. Code that does not know ProvStr cannot
 * read it (its toString throws), so an operation this file forgets refuses too: there is no path
 * on which caller text silently turns into template text.
 *
 * Every followed operation also computes the plain operation's result and checks that the text
 * is the same, so a render with provenance prints exactly what the plain render prints.
 */

/** A render that records, in `spans`, the output's [start, end) offsets of caller text. */
export class ProvRun extends Run {
  constructor(limits: Required<TemplateLimits>) {
    super(limits);
    this.spans = [];
  }

  // Filters and tests called from inside other filters (map('trim'), select('string'), selectattr(..., 'equalto', x)).
  override filter(name: string, value: unknown, args: unknown[], kwargs: Kw): unknown {
    const f = provFilter(name);
    if (f === undefined) return super.filter(name, value, args, kwargs);
    return f(this, value, args, kwargs);
  }

  override test(name: string, value: unknown, args: unknown[], kwargs: Kw): boolean {
    return super.test(name, plain(value), args.map(plain), kwargs);
  }
}

function unsafe(what: string): never {
  throw new ContentUnsafeError(what);
}

/** Tool-call arguments as a mapping that prints as its JSON text (TextMap), the text being caller text. */
export class ContentTextMap extends TextMap {
  constructor(
    entries: Iterable<readonly [unknown, unknown]>,
    readonly ptext: ProvStr | string,
  ) {
    super(entries, '');
    // Code that does not know this class reads `text` to print the mapping: it refuses instead.
    Object.defineProperty(this, 'text', {
      get: () => unsafe('printing tool-call arguments through an operation that cannot keep their provenance'),
    });
  }
}

type Text = string | ProvStr;

/** The value as a plain string when it is caller text (for answers that hold no text). */
export function plain(v: unknown): unknown {
  return v instanceof ProvStr ? v.s : v;
}

/** Caller text, all of it (a context string). Empty text is a plain string (ProvStr is never empty). */
export function content(s: string): Text {
  return s.length === 0 ? s : new ProvStr(s, [0, s.length]);
}

function make(s: string, spans: number[]): Text {
  if (spans.length === 0) return s;
  // Merge touching spans so a result's marks are canonical.
  const out: number[] = [];
  for (let i = 0; i < spans.length; i += 2) {
    const a = spans[i]!;
    const b = spans[i + 1]!;
    if (b <= a) continue;
    if (out.length > 0 && out[out.length - 1] === a) out[out.length - 1] = b;
    else out.push(a, b);
  }
  return out.length === 0 ? s : new ProvStr(s, out);
}

function textOf(v: Text): string {
  return typeof v === 'string' ? v : v.s;
}

/** text[a, b) with its marks. */
export function sub(v: Text, a: number, b: number): Text {
  if (typeof v === 'string') return v.slice(a, b);
  const spans: number[] = [];
  const sp = v.spans;
  for (let i = 0; i < sp.length; i += 2) {
    const x = Math.max(sp[i]!, a);
    const y = Math.min(sp[i + 1]!, b);
    if (x < y) spans.push(x - a, y - a);
  }
  return make(v.s.slice(a, b), spans);
}

/** Concatenation, each piece keeping its marks. */
export function cat(parts: readonly Text[]): Text {
  let s = '';
  const spans: number[] = [];
  for (const p of parts) {
    if (typeof p !== 'string') for (let i = 0; i < p.spans.length; i++) spans.push(p.spans[i]! + s.length);
    s += textOf(p);
  }
  return make(s, spans);
}

/** A value printed or joined: caller text keeps its marks; anything else is str() (which refuses on caller text inside containers). */
function asText(v: unknown): Text {
  if (typeof v === 'string') return v;
  if (v instanceof ProvStr) return v;
  if (v instanceof ContentTextMap) return v.ptext;
  return str(v);
}

function checkSame(got: Text, want: unknown, what: string): Text {
  if (textOf(got) !== want) unsafe(`${what}: the followed result differs from the plain one`);
  return got;
}

/** `{{ v }}` (and a filter block's or call block's output). */
export function provWrite(r: Run, v: unknown): void {
  const t = asText(v);
  if (typeof t === 'string') {
    r.write(t);
    return;
  }
  const base = r.out.length;
  const spans = r.spans!;
  for (let i = 0; i < t.spans.length; i++) spans.push(t.spans[i]! + base);
  r.write(t.s);
}

/** compile.ts capture() in a provenance render: the captured output keeps its marks. */
export function provCapture(r: Run, f: () => void): Text {
  const saved = r.out;
  const savedSpans = r.spans!;
  r.out = '';
  r.spans = [];
  r.capture++;
  try {
    f();
    return make(r.out, r.spans);
  } finally {
    r.capture--;
    r.out = saved;
    r.spans = savedSpans;
  }
}

function isTextLike(v: unknown): boolean {
  return v instanceof ProvStr || v instanceof ContentTextMap;
}

export function provBinop(r: Run, op: string, a: unknown, b: unknown): unknown {
  if (!isTextLike(a) && !isTextLike(b)) return binop(r, op, a, b);
  if (op === '~') return checkSize(r, cat([asText(a), asText(b)]));
  if (op === '+') {
    // str + str, and the mapping-as-its-JSON-text rule of runtime.ts (TextMap + str).
    const ta = typeof a === 'string' || a instanceof ProvStr || (a instanceof ContentTextMap && (typeof b === 'string' || b instanceof ProvStr));
    const tb = typeof b === 'string' || b instanceof ProvStr || (b instanceof ContentTextMap && (typeof a === 'string' || a instanceof ProvStr));
    if (ta && tb) return checkSize(r, cat([asText(a), asText(b)]));
  }
  if (op === '*') {
    const [s, n] = a instanceof ProvStr ? [a, b] : [b, a];
    if (s instanceof ProvStr && (isInt(n) || typeof n === 'boolean')) {
      const k = Math.max(0, num(n));
      r.checkSize(s.s.length * k);
      return cat(new Array<Text>(k).fill(s));
    }
  }
  if (op === '%') unsafe("'%' formatting with message text");
  // What is left fails on a str operand (typeName says 'str'), as in Python.
  return binop(r, op, a, b);
}

function checkSize(r: Run, t: Text): Text {
  if (textOf(t).length > r.maxOutput) r.checkSize(textOf(t).length);
  return t;
}

/** Comparisons, `in` and `not in`: a bool, so the plain strings answer. */
export function provCmp(op: string, a: unknown, b: unknown): boolean {
  return cmp(op, plain(a), plain(b));
}

/** Code point boundaries of s, as UTF-16 offsets (one more than the number of characters). */
function codePointOffsets(s: string): number[] {
  const out = [0];
  for (let i = 0; i < s.length; ) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
    out.push(i);
  }
  return out;
}

export function provGetitem(o: unknown, k: unknown): unknown {
  const key = plain(k);
  if (!(o instanceof ProvStr)) return getitem(o, key);
  if (typeof key === 'boolean') return provGetitem(o, key ? 1 : 0);
  if (typeof key !== 'number' || !Number.isInteger(key)) return getitem(o, key);
  const offs = codePointOffsets(o.s);
  const n = offs.length - 1;
  const i = key < 0 ? n + key : key;
  return i >= 0 && i < n ? checkSame(sub(o, offs[i]!, offs[i + 1]!), getitem(o.s, key), 'indexing') : undefined;
}

export function provSlice(o: unknown, start: unknown, stop: unknown, step: unknown): unknown {
  const [a, b, c] = [plain(start), plain(stop), plain(step)];
  if (!(o instanceof ProvStr)) return slice(o, a, b, c);
  const want = slice(o.s, a, b, c) as string;
  // The same slice over character indices tells which characters the result holds, in order.
  const offs = codePointOffsets(o.s);
  const picked = slice(
    Array.from({ length: offs.length - 1 }, (_, i) => i),
    a,
    b,
    c,
  ) as number[];
  const parts: Text[] = [];
  let run = -1;
  let prev = -2;
  for (const i of picked) {
    if (i === prev + 1 && run >= 0) {
      prev = i;
      continue;
    }
    if (run >= 0) parts.push(sub(o, offs[run]!, offs[prev + 1]!));
    run = prev = i;
  }
  if (run >= 0) parts.push(sub(o, offs[run]!, offs[prev + 1]!));
  return checkSame(cat(parts), want, 'slicing');
}

/** str methods whose answer holds no text: computed on the plain strings. */
const INSPECT_METHODS = new Set([
  'startswith',
  'endswith',
  'find',
  'rfind',
  'index',
  'rindex',
  'count',
  'isdigit',
  'isnumeric',
  'isdecimal',
  'isalpha',
  'isalnum',
  'isspace',
  'islower',
  'isupper',
]);

const noCall = (): never => unsafe('a method of message text');

function strOf(v: Text, name: string, args: unknown[], kwargs: Kw): unknown {
  return callMethod(textOf(v), name, args.map(plain), kwargs, noCall);
}

/** `s.split(...)` / `rsplit`: each part located in s, left to right (parts are separated by sep, or by whitespace when sep is None). */
function splitParts(v: ProvStr, name: string, args: unknown[], kwargs: Kw): unknown[] {
  const parts = strOf(v, name, args, kwargs) as string[];
  const sepArg = kwargs?.get('sep') ?? args[0];
  const sep = sepArg === undefined || sepArg === null ? null : (plain(sepArg) as string);
  const out: Text[] = [];
  let at = 0;
  for (const p of parts) {
    const k = sep === null ? v.s.indexOf(p, at) : at;
    if (k < 0 || !v.s.startsWith(p, k)) unsafe(`${name}: a part not found where it should be`);
    out.push(sub(v, k, k + p.length));
    at = k + p.length + (sep === null ? 0 : sep.length);
  }
  return out;
}

function replaceText(r: Run, v: Text, oldArg: unknown, neuArg: unknown, count: unknown): Text {
  const old = plain(oldArg);
  const neu = neuArg instanceof ProvStr ? neuArg : typeof neuArg === 'string' ? neuArg : unsafe('replace with a value that is not a string');
  if (typeof old !== 'string' || old === '') unsafe('replace of an empty or non-string pattern in message text');
  const s = textOf(v);
  const max = count === undefined || count === null ? -1 : num(count);
  const parts: Text[] = [];
  let at = 0;
  let n = 0;
  while (max < 0 || n < max) {
    const k = s.indexOf(old, at);
    if (k < 0) break;
    parts.push(sub(v, at, k), neu);
    at = k + old.length;
    n++;
  }
  parts.push(sub(v, at, s.length));
  const out = cat(parts);
  r.checkSize(textOf(out).length);
  return out;
}

export function provCallMethod(r: Run, o: unknown, name: string, args: unknown[], kwargs: Kw, call: (f: unknown, a: unknown[], k: Kw) => unknown): unknown {
  if (o instanceof ProvStr) {
    switch (name) {
      case 'strip': {
        const whole = strOf(o, 'strip', args, kwargs) as string;
        const a = o.s.length - (strOf(o, 'lstrip', args, kwargs) as string).length;
        return sub(o, a, a + whole.length);
      }
      case 'lstrip': {
        const rest = strOf(o, 'lstrip', args, kwargs) as string;
        return sub(o, o.s.length - rest.length, o.s.length);
      }
      case 'rstrip':
        return sub(o, 0, (strOf(o, 'rstrip', args, kwargs) as string).length);
      case 'removeprefix': {
        const rest = strOf(o, name, args, kwargs) as string;
        return sub(o, o.s.length - rest.length, o.s.length);
      }
      case 'removesuffix':
        return sub(o, 0, (strOf(o, name, args, kwargs) as string).length);
      case 'split':
      case 'rsplit':
        return splitParts(o, name, args, kwargs);
      case 'replace':
        return checkSame(replaceText(r, o, args[0], args[1], args[2]), strOf(o, name, args, kwargs), 'replace');
      default:
        if (INSPECT_METHODS.has(name)) return strOf(o, name, args, kwargs);
        return unsafe(`the str method '${name}' on message text`);
    }
  }
  if (typeof o === 'string') {
    if (name === 'join' && args.length === 1) {
      const items = iterate(args[0]);
      // The plain join raises where Python's does (an item that is not a str).
      return checkSame(joinText(r, items, o), callMethod(o, 'join', [items.map(plainDeepText)], kwargs, call), 'join');
    }
    if (INSPECT_METHODS.has(name)) return callMethod(o, name, args.map(plain), kwargs, call);
    if (name === 'replace' && args.some(isTextLike)) return checkSame(replaceText(r, o, args[0], args[1], args[2]), strOf(o, name, args, kwargs), 'replace');
    if (args.some(isTextLike) || (kwargs !== null && [...kwargs.values()].some(isTextLike)))
      unsafe(`the str method '${name}' with message text as an argument`);
    return callMethod(o, name, args, kwargs, call);
  }
  // dict.get(key, default), list.index(x), ...: a key is compared, never printed.
  if (isDict(o) && args.length > 0) return callMethod(o, name, [plain(args[0]), ...args.slice(1)], kwargs, call);
  return callMethod(o, name, args, kwargs, call);
}

function joinText(r: Run, items: readonly unknown[], sep: unknown): Text {
  const s = asText(sep);
  const parts: Text[] = [];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) parts.push(s);
    parts.push(asText(items[i]));
  }
  const out = cat(parts);
  r.checkSize(textOf(out).length);
  return out;
}

type Filter = (h: Run, v: unknown, a: unknown[], k: Kw) => unknown;

function kwarg(a: unknown[], k: Kw, i: number, name: string, def: unknown): unknown {
  if (i < a.length) return a[i];
  if (k?.has(name)) return k.get(name);
  return def;
}

/** Filters whose value may hold caller text deep inside: they move items, compare them (eq/compare know ProvStr) or test them (ProvRun.test). */
const PASS_FILTERS = new Set([
  'attr',
  'batch',
  'default',
  'd',
  'dictsort',
  'groupby',
  'items',
  'list',
  'map',
  'max',
  'min',
  'reject',
  'rejectattr',
  'reverse',
  'select',
  'selectattr',
  'slice',
  'sort',
  'sum',
  'unique',
]);

/** Filters whose answer is a number: the plain value answers. */
const NUMBER_FILTERS = new Set(['length', 'count', 'wordcount', 'int', 'float', 'abs', 'round']);

const FOLLOWED: Record<string, Filter> = {
  trim: (h, v, a, k) =>
    v instanceof ProvStr || v instanceof ContentTextMap
      ? provCallMethod(h, asText(v), 'strip', [kwarg(a, k, 0, 'chars', null)], null, noCall)
      : plainFilter('trim', h, v, a, k),
  string: (h, v, a, k) => (v instanceof ProvStr || v instanceof ContentTextMap ? asText(v) : plainFilter('string', h, v, a, k)),
  safe: (h, v, a, k) => (v instanceof ProvStr || v instanceof ContentTextMap ? asText(v) : plainFilter('safe', h, v, a, k)),
  first: (h, v, a, k) => (v instanceof ProvStr ? provGetitem(v, 0) : FILTERS.first!(h, v, a, k)),
  last: (h, v, a, k) => (v instanceof ProvStr ? provGetitem(v, -1) : FILTERS.last!(h, v, a, k)),
  join: (h, v, a, k) => {
    const sep = kwarg(a, k, 0, 'd', '');
    const attr = kwarg(a, k, 1, 'attribute', null);
    const items = attr === null ? iterate(v) : iterate(FILTERS.map!(h, v, [], new Map([['attribute', attr]])));
    return checkSame(joinText(h, items, sep), FILTERS.join!(h, items.map(plainDeepText), [plain(sep)], null), 'join');
  },
  replace: (h, v, a, k) => {
    const count = kwarg(a, k, 2, 'count', null);
    if (!isTextLike(v) && !a.some(isTextLike)) return FILTERS.replace!(h, v, a, k);
    // The filter's '' pattern inserts between characters: not followed.
    return checkSame(replaceText(h, asText(v), a[0], a[1], count), FILTERS.replace!(h, plainDeepText(v), a.map(plain), k), 'replace');
  },
  tojson: (h, v, a, k) => provTojson(h, v, a, k),
};

/** For the plain check of a followed result: a ProvStr as its text, a ContentTextMap as its JSON text. */
function plainDeepText(v: unknown): unknown {
  if (v instanceof ProvStr) return v.s;
  if (v instanceof ContentTextMap) return textOf(v.ptext);
  return v;
}

function plainFilter(name: string, h: Run, v: unknown, a: unknown[], k: Kw): unknown {
  return FILTERS[name]!(h, v, a, k);
}

const filterCache = new Map<string, Filter>();

/** The filter as a provenance render runs it, or undefined when there is no such filter. */
export function provFilter(name: string): Filter | undefined {
  // Own properties only: `constructor` and the like are not filters.
  const known = Object.hasOwn(FILTERS, name) ? FILTERS[name] : undefined;
  if (known === undefined) return undefined;
  let f = filterCache.get(name);
  if (f !== undefined) return f;
  const followed = FOLLOWED[name];
  if (followed !== undefined) f = followed;
  else if (NUMBER_FILTERS.has(name))
    f = (h, v, a, k) => {
      // int(default=...) would hand a default back as it is.
      if (a.some(isTextLike) || (k !== null && [...k.values()].some(isTextLike))) unsafe(`the filter '${name}' with message text as an argument`);
      return known(h, plain(v), a, k);
    };
  else if (PASS_FILTERS.has(name)) f = known;
  else
    f = (h, v, a, k) => {
      if (isTextLike(v) || a.some(isTextLike) || (k !== null && [...k.values()].some(isTextLike))) unsafe(`the filter '${name}' on message text`);
      return known(h, v, a, k);
    };
  filterCache.set(name, f);
  return f;
}

/** A test as a provenance render runs it: a bool, so the plain strings answer. */
export function provTest(t: (h: Run, v: unknown, a: unknown[]) => boolean): (h: Run, v: unknown, a: unknown[]) => boolean {
  return (h, v, a) => t(h, plain(v), a.map(plain));
}

const MARK = '\uE000';
const MARK_END = '\uE001';

/**
 * tojson over a value that holds caller text: each caller string's escaped body keeps the
 * marks of the characters it escapes (json.dumps escapes one character at a time). The plain
 * dumps runs with each caller string replaced by a private-use placeholder, whose escaped form
 * is then replaced by the escaped body; a value whose other strings already hold the
 * placeholder character refuses, and the result must equal the plain dumps.
 */
function provTojson(h: Run, v: unknown, a: unknown[], k: Kw): unknown {
  const found: ProvStr[] = [];
  const marked = mapCallerText(v, (x) => {
    found.push(x);
    return `${MARK}${found.length - 1}${MARK_END}`;
  });
  if (found.length === 0) return FILTERS.tojson!(h, v, a, k);
  const ensureAscii = truthy(plain(kwarg(a, k, 0, 'ensure_ascii', false)));
  const text = FILTERS.tojson!(h, marked, a, k) as string;
  const open = pythonJsonString(MARK, ensureAscii).slice(1, -1);
  const close = pythonJsonString(MARK_END, ensureAscii).slice(1, -1);
  const parts: Text[] = [];
  let at = 0;
  for (let i = 0; i < found.length; i++) {
    const placeholder = `${open}${i}${close}`;
    const p = text.indexOf(placeholder, at);
    if (p < 0 || text.indexOf(open, at) !== p) unsafe('tojson: a string of the value holds the placeholder character');
    parts.push(text.slice(at, p), escapedBody(found[i]!, ensureAscii));
    at = p + placeholder.length;
  }
  if (text.indexOf(open, at) >= 0) unsafe('tojson: a string of the value holds the placeholder character');
  parts.push(text.slice(at));
  const out = cat(parts);
  const plainValue = mapCallerText(v, (x) => x.s);
  return checkSame(out, FILTERS.tojson!(h, plainValue, a, k), 'tojson');
}

/** json.dumps's body of a string (no quotes), each character's escape keeping its mark. */
function escapedBody(v: ProvStr, ensureAscii: boolean): Text {
  const parts: Text[] = [];
  let at = 0;
  const sp = v.spans;
  for (let i = 0; i <= sp.length; i += 2) {
    const a = i < sp.length ? sp[i]! : v.s.length;
    if (a > at) parts.push(pythonJsonString(v.s.slice(at, a), ensureAscii).slice(1, -1));
    if (i >= sp.length) break;
    const body = pythonJsonString(v.s.slice(a, sp[i + 1]!), ensureAscii).slice(1, -1);
    parts.push(content(body));
    at = sp[i + 1]!;
  }
  return cat(parts);
}

/**
 * A copy of `v` with each caller string replaced by `leaf(it)`: containers copied once each
 * (shared and cyclic ones stay so), a mapping keyed by caller text refused.
 */
function mapCallerText(v: unknown, leaf: (x: ProvStr) => unknown): unknown {
  const seen = new Map<object, unknown>();
  const go = (x: unknown, depth: number): unknown => {
    if (x instanceof ProvStr) return leaf(x);
    if (x === null || typeof x !== 'object' || depth > 1000) return x;
    const done = seen.get(x);
    if (done !== undefined) return done;
    if (Array.isArray(x)) {
      const out: unknown[] = x instanceof PyTuple ? new PyTuple() : [];
      seen.set(x, out);
      for (const y of x) out.push(go(y, depth + 1));
      return out;
    }
    if (isDict(x)) {
      const out = new Map<unknown, unknown>();
      seen.set(x, out);
      for (const [key, y] of x instanceof Map ? [...x.entries()] : Object.entries(x)) {
        if (key instanceof ProvStr) unsafe('tojson of a mapping keyed by message text');
        out.set(key, go(y, depth + 1));
      }
      return out;
    }
    return x;
  };
  return go(v, 0);
}
