import { dumps } from './json.js';
import {
  center,
  filesizeformat,
  indentFilter,
  percentFormat,
  pformat,
  striptags,
  titleFilter,
  truncate,
  urlencode,
  urlize,
  wordwrap,
  xmlattr,
} from './filters-text.js';
import { escapeMarkup, htmlEscape, markupBinop } from './markup.js';
import { getattr, getitem, pyStrip } from './methods.js';
import { pyReplace } from './str-methods.js';
import { pyCapitalize, pyIsLower, pyIsUpper, pyLower, pyUpper } from './pyunicode.js';
import {
  boundItems,
  compare,
  MAX_STR_DIGITS,
  dictEntries,
  eq,
  fail,
  float,
  floatRepr,
  isDict,
  isFloat,
  isInt,
  isNumber,
  iterate,
  length,
  Markup,
  Namespace,
  num,
  PyCallable,
  PyFloat,
  PyBytes,
  PyIter,
  PyTuple,
  PyView,
  Range,
  str,
  truthy,
  tuple,
  typeName,
  unmark,
  ProvStr,
} from './values.js';

/**
 * Jinja2's builtin filters and tests (jinja2/filters.py, jinja2/tests.py), with transformers'
 * `tojson` (json.dumps, not Jinja2's HTML-safe one). Autoescape is off, as in transformers, so
 * escape/safe/forceescape only convert to a string (escape still escapes).
 */
export type Kw = Map<string, unknown> | null;
export interface FilterHost {
  filter(name: string, value: unknown, args: unknown[], kwargs: Kw): unknown;
  test(name: string, value: unknown, args: unknown[], kwargs: Kw): boolean;
  call(fn: unknown, args: unknown[], kwargs: Kw): unknown;
  checkSize(n: number): void;
  /** The result depends on more than the arguments (random): an incremental render must not reuse it. */
  impure(): void;
}
type Filter = (h: FilterHost, v: unknown, a: unknown[], k: Kw) => unknown;

/** Positional or keyword argument `name` at position `i` (after the value). */
function arg(a: unknown[], k: Kw, i: number, name: string, def?: unknown): unknown {
  if (k?.has(name)) return k.get(name);
  return i < a.length ? a[i] : def;
}

/** An attribute path `a.b.0` as Jinja2's make_attrgetter resolves it. */
function attrPath(v: unknown, path: unknown): unknown {
  if (typeof path !== 'string') return getitem(v, path);
  let x = v;
  for (const part of path.split('.')) {
    if (x === undefined) return undefined;
    x = /^\d+$/.test(part) ? getitem(x, Number(part)) : getitem(x, part);
  }
  return x;
}

function toList(v: unknown): unknown[] {
  return [...iterate(v)];
}

function sortKey(v: unknown, caseSensitive: boolean): unknown {
  // Caller text (a provenance render's ProvStr) is compared by its plain text.
  if (v instanceof ProvStr) return caseSensitive ? v.s : v.s.toLowerCase();
  return !caseSensitive && typeof v === 'string' ? v.toLowerCase() : v;
}

function pyInt(v: unknown, def: unknown, base: unknown): unknown {
  if (v === undefined) fail('int() of an undefined value');
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (isInt(v)) return v;
  if (isFloat(v)) {
    const t = Math.trunc(num(v));
    if (!Number.isFinite(t)) fail('cannot convert float infinity or NaN to integer');
    return Number.isSafeInteger(t) ? t : BigInt(t);
  }
  if (typeof v === 'string') {
    const b = num(base ?? 10);
    const s = v.trim().replace(/_/g, '');
    const re = b === 10 ? /^[+-]?\d+$/ : b === 16 ? /^[+-]?(0x)?[0-9a-f]+$/i : b === 8 ? /^[+-]?(0o)?[0-7]+$/i : b === 2 ? /^[+-]?(0b)?[01]+$/i : /^$/;
    if (re.test(s)) {
      // int() of more than 4300 decimal digits is a ValueError, and float() of it is inf, which int() refuses: the default.
      if (b === 10 && s.replace(/^[+-]/, '').length > MAX_STR_DIGITS) return def ?? 0;
      const n = b === 10 ? Number(s) : parseInt(s.replace(/^([+-]?)0[xob]/i, '$1'), b);
      return Number.isSafeInteger(n) ? n : BigInt(s);
    }
    // Jinja2 falls back to int(float(value)).
    if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s)) return Math.trunc(Number(s));
  }
  return def ?? 0;
}

function pyFloat(v: unknown, def: unknown): unknown {
  if (v === undefined) fail('float() of an undefined value');
  if (typeof v === 'boolean') return float(v ? 1 : 0);
  if (typeof v === 'bigint' && !Number.isFinite(Number(v))) fail('int too large to convert to float');
  if (isNumber(v)) return float(num(v));
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase().replace(/_/g, '');
    if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(s)) return float(Number(s));
    if (/^[+-]?(inf|infinity)$/.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
    if (/^[+-]?nan$/.test(s)) return NaN;
  }
  return def ?? new PyFloat(0);
}

/**
 * Python's round(x, p): the exact decimal value of the binary float decides (2.675 is below the
 * tie: 2.67), and exact ties go to the even digit (2.5 → 2, 0.125 → 0.12). toFixed rounds the
 * exact value too, but breaks exact ties upwards.
 */
function pyRound(x: number, p: number): number {
  if (!Number.isFinite(x) || p > 20) return x;
  if (p < 0) {
    const f = 10 ** -p;
    return pyRound(x / f, 0) * f;
  }
  const a = Math.abs(x);
  const exact = a.toFixed(Math.min(100, p + 40));
  const [intPart, frac = ''] = exact.split('.') as [string, string?];
  const kept = frac.slice(0, p);
  let r = Number(a.toFixed(p));
  if (/^50*$/.test(frac.slice(p))) {
    const last = p > 0 ? kept[p - 1]! : intPart[intPart.length - 1]!;
    if (Number(last) % 2 === 0) r = Number(p > 0 ? `${intPart}.${kept}` : intPart);
  }
  return x < 0 || Object.is(x, -0) ? -r : r;
}

function roundFilter(v: unknown, precision: unknown, method: unknown): unknown {
  const p = num(precision ?? 0);
  const m = str(method ?? 'common');
  if (m !== 'common' && m !== 'ceil' && m !== 'floor') fail('method must be common, ceil or floor');
  // An int stays an int under round() (bool too: round(True) is 1); a negative precision rounds
  // it to tens, hundreds, ... with ties to even, as Python's int.__round__.
  if (m === 'common' && (isInt(v) || typeof v === 'boolean')) {
    const n = typeof v === 'boolean' ? (v ? 1n : 0n) : BigInt(v as number | bigint);
    if (p >= 0) return typeof v === 'boolean' ? Number(n) : v;
    const f = 10n ** BigInt(-p);
    let q = n / f;
    let rem = n % f;
    if (rem < 0n) {
      q -= 1n;
      rem += f;
    }
    if (rem * 2n > f || (rem * 2n === f && q % 2n !== 0n)) q += 1n;
    const out = q * f;
    return Number.isSafeInteger(Number(out)) ? Number(out) : out;
  }
  const x = num(v);
  const f = 10 ** p;
  const r = m === 'ceil' ? Math.ceil(x * f) / f : m === 'floor' ? Math.floor(x * f) / f : pyRound(x, p);
  return float(r);
}

function selectOrReject(h: FilterHost, v: unknown, a: unknown[], k: Kw, attr: boolean, want: boolean): unknown[] {
  // Jinja2's select_or_reject: `if seq:` first, so a false value (None, 0, '') is not iterated.
  if (!truthy(v)) return [];
  const items = toList(v);
  const key = attr ? a[0] : undefined;
  const rest = attr ? a.slice(1) : a;
  const get = (x: unknown) => (attr ? attrPath(x, key) : x);
  if (rest.length === 0) return items.filter((x) => truthy(get(x)) === want);
  const test = str(rest[0]);
  const targs = rest.slice(1);
  return items.filter((x) => h.test(test, get(x), targs, k) === want);
}

function groupby(v: unknown, attribute: unknown, def: unknown): unknown[] {
  const items = toList(v);
  const keyed = items.map((x) => [attrPath(x, attribute) ?? def, x] as [unknown, unknown]);
  keyed.sort((x, y) => compare(x[0], y[0]));
  const out: unknown[] = [];
  for (const [key, x] of keyed) {
    const last = out[out.length - 1] as PyTuple | undefined;
    if (last && eq(last[0], key)) (last[1] as unknown[]).push(x);
    else out.push(groupTuple(key, [x]));
  }
  return out;
}

class GroupTuple extends PyTuple {
  attr(name: string): unknown {
    return name === 'grouper' ? this[0] : name === 'list' ? this[1] : undefined;
  }
}
function groupTuple(key: unknown, list: unknown[]): PyTuple {
  const t = new GroupTuple();
  t.push(key, list);
  return t;
}

// reversed(): an iterator for a list; a generator is not reversible, Jinja2 then builds a list.
function reverseOf(v: unknown): unknown {
  if (typeof v === 'string') return Array.from(v).reverse().join('');
  if (Array.isArray(v) || v instanceof Range) return new PyIter([...iterate(v)].reverse(), 'list_reverseiterator');
  return [...iterate(v)].reverse();
}

/**
 * A Markup value (markup.ts) is its text to the filters (str(), iterate() and length() read it
 * so); the ones Jinja2 implements with Markup's own methods (soft_str(value).upper() and the
 * like) give Markup back: keep(value, result).
 */
function keep(v: unknown, r: unknown): unknown {
  return v instanceof Markup && typeof r === 'string' ? new Markup(r) : r;
}

export const FILTERS: Record<string, Filter> = {
  abs: (_h, v) => (typeof v === 'bigint' ? (v < 0n ? -v : v) : isFloat(v) ? float(Math.abs(num(v))) : Math.abs(num(v))),
  // attr() is getattr only (the sandbox's): a dict's item is not an attribute.
  attr: (_h, v, a) =>
    isDict(v) ? (['items', 'keys', 'values', 'get', 'copy'].includes(str(a[0])) ? getattr(v, str(a[0])) : undefined) : getattr(v, str(a[0])),
  batch: (_h, v, a) => {
    const n = num(a[0]);
    const items = toList(v);
    const out: unknown[][] = [];
    // do_batch yields the batch before adding an item when the batch holds `linecount` items: so
    // linecount 0 yields an empty batch first, and a negative one never ends a batch.
    if (n === 0 && items.length) out.push([]);
    const step = n > 0 ? n : Infinity;
    for (let i = 0; i < items.length; i += step) out.push(items.slice(i, i + step));
    const fill = a[1];
    if (fill !== undefined && fill !== null && out.length && out[out.length - 1]!.length < n) {
      const last = out[out.length - 1]!;
      boundItems(n);
      while (last.length < n) last.push(fill);
    }
    return gen(out);
  },
  capitalize: (_h, v) => keep(v, pyCapitalize(str(v))),
  center: (_h, v, a, k) => keep(v, center(str(v), num(arg(a, k, 0, 'width', 80)))),
  count: (_h, v) => length(v),
  // dictsort/sort/groupby/list return lists, as in Jinja2.
  default: (_h, v, a, k) => {
    const def = arg(a, k, 0, 'default_value', '');
    const bool = truthy(arg(a, k, 1, 'boolean', false));
    return v === undefined || (bool && !truthy(v)) ? def : v;
  },
  dictsort: (_h, v, a, k) => {
    if (!isDict(v)) return fail('dictsort: value must be a dict');
    const cs = truthy(arg(a, k, 0, 'case_sensitive', false));
    const by = str(arg(a, k, 1, 'by', 'key'));
    const rev = truthy(arg(a, k, 2, 'reverse', false));
    const pos = by === 'key' ? 0 : by === 'value' ? 1 : fail('You can only sort by either "key" or "value"');
    const items = dictEntries(v).map(([x, y]) => tuple([x, y]));
    items.sort((x, y) => compare(sortKey(x[pos], cs), sortKey(y[pos], cs)) * (rev ? -1 : 1));
    return items;
  },
  escape: (_h, v) => escapeMarkup(v),
  filesizeformat: (_h, v, a, k) => filesizeformat(unmark(v), arg(a, k, 0, 'binary', false)),
  first: (_h, v) => {
    if (v instanceof Range) return v.length > 0 ? v.at(0) : undefined;
    if (v instanceof PyIter) return v.pos < v.items.length ? v.items[v.pos++] : undefined;
    const items = iterate(v);
    return items.length ? items[0] : undefined;
  },
  float: (_h, v, a, k) => pyFloat(unmark(v), arg(a, k, 0, 'default')),
  // escape(str(value)): a Markup's text is escaped again.
  forceescape: (_h, v) => new Markup(htmlEscape(str(v))),
  // soft_str(value) % (kwargs or args): Markup's % escapes the arguments.
  format: (_h, v, a, k) => {
    const args = k !== null && k.size > 0 ? k : tuple(a);
    return v instanceof Markup ? markupBinop('%', v, args, percentFormat) : percentFormat(str(v), args);
  },
  groupby: (_h, v, a, k) => groupby(v, arg(a, k, 0, 'attribute'), arg(a, k, 1, 'default')),
  indent: (_h, v, a, k) => keep(v, indentFilter(unmark(v), arg(a, k, 0, 'width', 4), arg(a, k, 1, 'first', false), arg(a, k, 2, 'blank', false))),
  int: (_h, v, a, k) => pyInt(unmark(v), arg(a, k, 0, 'default', 0), arg(a, k, 1, 'base', 10)),
  items: (_h, v) =>
    gen(v === undefined ? [] : isDict(v) ? dictEntries(v).map(([x, y]) => tuple([x, y])) : fail(`items: expected a mapping, got ${typeName(v)}`)),
  join: (h, v, a, k) => {
    const sep = str(arg(a, k, 0, 'd', ''));
    const attr = arg(a, k, 1, 'attribute', null);
    const items = toList(v).map((x) => str(attr === null ? x : attrPath(x, attr)));
    let n = 0;
    for (const s of items) n += s.length + sep.length;
    h.checkSize(n);
    return items.join(sep);
  },
  last: (_h, v) => {
    if (v instanceof PyIter || v instanceof PyView) fail(`'${typeName(v)}' object is not reversible`);
    const items = iterate(v);
    return items.length ? items[items.length - 1] : undefined;
  },
  length: (_h, v) => length(v),
  list: (_h, v) => toList(v),
  lower: (_h, v) => keep(v, pyLower(str(v))),
  map: (h, v, a, k) => gen(mapFilter(h, v, a, k)),
  pprint: (_h, v) => pformat(v),
  max: (_h, v, a, k) => extreme(v, a, k, 1),
  min: (_h, v, a, k) => extreme(v, a, k, -1),
  // random.choice: an empty sequence (or Undefined) gives Undefined. The output is not a function of the input.
  random: (h, v) => {
    h.impure();
    const items = iterate(v);
    return items.length ? items[Math.floor(Math.random() * items.length)] : undefined;
  },
  reject: (h, v, a, k) => gen(selectOrReject(h, v, a, k, false, false)),
  rejectattr: (h, v, a, k) => gen(selectOrReject(h, v, a, k, true, false)),
  // do_replace: str(s).replace(str(old), str(new), count), count None meaning all.
  replace: (_h, v, a, k) => pyReplace(str(v), str(a[0]), str(a[1]), arg(a, k, 2, 'count', null) ?? undefined),
  reverse: (_h, m) => {
    const v = unmark(m);
    return keep(m, reverseOf(v));
  },
  round: (_h, v, a, k) => roundFilter(v, arg(a, k, 0, 'precision', 0), arg(a, k, 1, 'method', 'common')),
  safe: (_h, v) => (v instanceof Markup ? v : new Markup(str(v))),
  select: (h, v, a, k) => gen(selectOrReject(h, v, a, k, false, true)),
  selectattr: (h, v, a, k) => gen(selectOrReject(h, v, a, k, true, true)),
  slice: (_h, v, a) => {
    const items = toList(v);
    const n = num(a[0]);
    boundItems(n);
    const per = Math.floor(items.length / n);
    const extra = items.length % n;
    const out: unknown[][] = [];
    let off = 0;
    for (let i = 0; i < n; i++) {
      const size = per + (i < extra ? 1 : 0);
      const part = items.slice(off, off + size);
      off += size;
      // sync_do_slice: every slice past the longer ones gets the fill (all of them when none is longer).
      if (a.length > 1 && a[1] !== null && a[1] !== undefined && i >= extra) part.push(a[1]);
      out.push(part);
    }
    return gen(out);
  },
  sort: (_h, v, a, k) => {
    const rev = truthy(arg(a, k, 0, 'reverse', false));
    const cs = truthy(arg(a, k, 1, 'case_sensitive', false));
    const attr = arg(a, k, 2, 'attribute', null);
    const items = toList(v);
    // attribute='age,name': a tuple of attributes (Jinja2's make_multi_attrgetter).
    const attrs = typeof attr === 'string' && attr.includes(',') ? attr.split(',') : null;
    const key = (x: unknown) => (attrs ? attrs.map((p) => sortKey(attrPath(x, p), cs)) : sortKey(attr === null ? x : attrPath(x, attr), cs));
    return (
      items
        .map((x, i) => [key(x), i, x] as const)
        // make_multi_attrgetter's keys are lists, which compare equal items by == before <: equal
        // keys (Undefined ones too) never reach <.
        .sort((x, y) => (eq(x[0], y[0]) ? 0 : compare(x[0], y[0]) * (rev ? -1 : 1)) || x[1] - y[1])
        .map((x) => x[2])
    );
  },
  string: (_h, v) => (v instanceof Markup ? v : str(v)),
  striptags: (_h, v) => striptags(str(v)),
  sum: (_h, v, a, k) => {
    const attr = arg(a, k, 0, 'attribute', null);
    const start = arg(a, k, 1, 'start', 0);
    let total: unknown = start;
    for (const x of iterate(v)) {
      const y = attr === null ? x : attrPath(x, attr);
      if (Array.isArray(total) && Array.isArray(y)) {
        // Python's list + list builds a new list each time; appending to a copy is the same value, in linear time.
        boundItems(total.length + y.length);
        if (total === start) total = [...total];
        for (const z of y) (total as unknown[]).push(z);
      } else total = isFloat(total) || isFloat(y) ? float(num(total) + num(y)) : num(total) + num(y);
    }
    return total;
  },
  title: (_h, v) => titleFilter(str(v)),
  // transformers' override: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
  tojson: (_h, v, a, k) => {
    const indent = arg(a, k, 1, 'indent', null);
    const seps = arg(a, k, 2, 'separators', null);
    if (seps !== null && (!Array.isArray(seps) || seps.length !== 2)) fail('separators must be a pair of strings');
    return dumps(v, {
      indent: indent === null || indent === undefined ? null : typeof indent === 'string' ? indent : num(indent),
      separators: seps === null ? null : [str((seps as unknown[])[0]), str((seps as unknown[])[1])],
      sortKeys: truthy(arg(a, k, 3, 'sort_keys', false)),
      ensureAscii: truthy(arg(a, k, 0, 'ensure_ascii', false)),
    });
  },
  trim: (_h, v, a, k) => keep(v, pyStrip(str(v), arg(a, k, 0, 'chars', null))),
  truncate: (_h, v, a, k) =>
    keep(v, truncate(unmark(v), arg(a, k, 0, 'length', 255), arg(a, k, 1, 'killwords', false), arg(a, k, 2, 'end', '...'), arg(a, k, 3, 'leeway', 5))),
  unique: (_h, v, a, k) => {
    const cs = truthy(arg(a, k, 0, 'case_sensitive', false));
    const attr = arg(a, k, 1, 'attribute', null);
    // A set of the keys: strings and numbers by a hash key, anything else (tuples) compared with ==.
    const hashed = new Set<string>();
    const seen: unknown[] = [];
    const out: unknown[] = [];
    for (const x of iterate(v)) {
      const key = sortKey(attr === null ? x : attrPath(x, attr), cs);
      if ((Array.isArray(key) && !(key instanceof PyTuple)) || isDict(key)) fail(`unhashable type: '${typeName(key)}'`);
      const h = hashKey(key);
      if (h !== null ? hashed.has(h) : seen.some((s) => eq(s, key))) continue;
      if (h !== null) hashed.add(h);
      else seen.push(key);
      out.push(x);
    }
    return gen(out);
  },
  upper: (_h, v) => keep(v, pyUpper(str(v))),
  urlencode: (_h, v) => urlencode(v),
  urlize: (_h, v, a, k) =>
    urlize(v, arg(a, k, 0, 'trim_url_limit', null), arg(a, k, 1, 'nofollow', false), arg(a, k, 2, 'target', null), arg(a, k, 3, 'rel', null)),
  wordcount: (_h, v) => (str(v).match(/[\p{L}\p{N}_]+/gu) ?? []).length,
  wordwrap: (_h, v, a, k) =>
    wordwrap(
      unmark(v),
      arg(a, k, 0, 'width', 79),
      arg(a, k, 1, 'break_long_words', true),
      arg(a, k, 2, 'wrapstring', null),
      arg(a, k, 3, 'break_on_hyphens', true),
    ),
  xmlattr: (_h, v, a, k) => xmlattr(v, arg(a, k, 0, 'autospace', true)),
};
FILTERS.d = FILTERS.default!;
FILTERS.e = FILTERS.escape!;

function mapFilter(h: FilterHost, v: unknown, a: unknown[], k: Kw): unknown[] {
  // Jinja2's do_map: `if value:` first, so a false value is not iterated.
  if (!truthy(v)) return [];
  const items = toList(v);
  if (k?.has('attribute')) {
    const attr = k.get('attribute');
    const def = k.get('default');
    return items.map((x) => {
      const y = attrPath(x, attr);
      return y === undefined && k.has('default') ? def : y;
    });
  }
  if (a.length === 0) return fail('map requires a filter argument');
  const name = str(a[0]);
  return items.map((x) => h.filter(name, x, a.slice(1), k));
}

/**
 * A string that is the same for keys Python's set treats as one (1, 1.0 and True; a str and a
 * Markup of the same text), or null for a key compared with == instead (NaN, tuples, Undefined).
 */
function hashKey(k: unknown): string | null {
  if (typeof k === 'string') return `s${k}`;
  if (k instanceof Markup) return `s${k.s}`;
  if (k === null) return 'None';
  if (typeof k === 'boolean') return k ? 'n1' : 'n0';
  const n = k instanceof PyFloat ? k.v : k;
  if (typeof n === 'bigint') return `n${n}`;
  if (typeof n !== 'number' || Number.isNaN(n)) return null;
  if (!Number.isInteger(n)) return `n${n}`;
  // An integral float equals the int of its value: the same digits as a bigint's.
  return `n${Math.abs(n) < 1e21 ? String(n === 0 ? 0 : n) : BigInt(n)}`;
}

function gen(items: unknown[]): PyIter {
  return new PyIter(items);
}

function extreme(v: unknown, a: unknown[], k: Kw, sign: number): unknown {
  const items = toList(v);
  if (items.length === 0) return undefined;
  const cs = truthy(arg(a, k, 0, 'case_sensitive', false));
  const attr = arg(a, k, 1, 'attribute', null);
  let best = items[0];
  const key = (x: unknown) => sortKey(attr === null ? x : attrPath(x, attr), cs);
  for (const x of items.slice(1)) if (compare(key(x), key(best)) * sign > 0) best = x;
  return best;
}

type Test = (h: FilterHost, v: unknown, a: unknown[]) => boolean;

export const TESTS: Record<string, Test> = {
  boolean: (_h, v) => typeof v === 'boolean',
  // Undefined defines __call__ (it raises when called), so callable(Undefined) is true.
  callable: (_h, v) => v instanceof PyCallable || typeof v === 'function' || v === undefined,
  defined: (_h, v) => v !== undefined,
  undefined: (_h, v) => v === undefined,
  divisibleby: (_h, v, a) => num(v) % num(a[0]) === 0,
  eq: (_h, v, a) => eq(v, a[0]),
  ne: (_h, v, a) => !eq(v, a[0]),
  even: (_h, v) => num(v) % 2 === 0,
  odd: (_h, v) => Math.abs(num(v) % 2) === 1,
  false: (_h, v) => v === false,
  true: (_h, v) => v === true,
  float: (_h, v) => isFloat(v),
  integer: (_h, v) => isInt(v),
  number: (_h, v) => isNumber(v) || typeof v === 'boolean',
  ge: (_h, v, a) => compare(v, a[0]) >= 0,
  gt: (_h, v, a) => compare(v, a[0]) > 0,
  le: (_h, v, a) => compare(v, a[0]) <= 0,
  lt: (_h, v, a) => compare(v, a[0]) < 0,
  in: (_h, v, a) => contains(a[0], v),
  // Undefined defines __iter__ and __len__: iterable and a sequence, as Jinja2's tests say.
  iterable: (_h, v) =>
    v === undefined ||
    typeof v === 'string' ||
    Array.isArray(v) ||
    isDict(v) ||
    v instanceof Range ||
    v instanceof PyIter ||
    v instanceof PyView ||
    v instanceof Markup ||
    v instanceof PyBytes,
  // tests.py test_lower/test_upper: str(value).islower() / .isupper().
  lower: (_h, v) => pyIsLower(str(v)),
  upper: (_h, v) => pyIsUpper(str(v)),
  mapping: (_h, v) => isDict(v),
  none: (_h, v) => v === null,
  sameas: (_h, v, a) => v === a[0] || (v instanceof PyFloat && a[0] instanceof PyFloat && v.v === a[0].v && false),
  sequence: (_h, v) =>
    v === undefined || typeof v === 'string' || Array.isArray(v) || isDict(v) || v instanceof Range || v instanceof Markup || v instanceof PyBytes,
  // A Markup is a str.
  string: (_h, v) => typeof v === 'string' || v instanceof Markup,
  escaped: (_h, v) => v instanceof Markup,
  filter: (_h, v) => isName(v, FILTERS),
  test: (_h, v) => isName(v, TESTS),
};

/** `value in environment.filters` (or tests): an unhashable value (list, dict) raises TypeError. */
function isName(v: unknown, table: object): boolean {
  if (unhashable(v)) fail(`unhashable type: '${typeName(v)}'`);
  const name = unmark(v);
  return typeof name === 'string' && Object.hasOwn(table, name);
}
TESTS.equalto = TESTS.eq!;
TESTS['=='] = TESTS.eq!;
TESTS['!='] = TESTS.ne!;
TESTS.greaterthan = TESTS.gt!;
TESTS['>'] = TESTS.gt!;
TESTS['>='] = TESTS.ge!;
TESTS.lessthan = TESTS.lt!;
TESTS['<'] = TESTS.lt!;
TESTS['<='] = TESTS.le!;

function unhashable(v: unknown): boolean {
  return (Array.isArray(v) && !(v instanceof PyTuple)) || isDict(v) || (v instanceof PyView && v.kind !== 'dict_values');
}

/** Python `needle in haystack`. */
export function contains(hayIn: unknown, needleIn: unknown): boolean {
  const hay = unmark(hayIn);
  const needle = unmark(needleIn);
  if (typeof hay === 'string') {
    if (typeof needle !== 'string') return fail(`'in <string>' requires string as left operand, not ${typeName(needle)}`);
    return hay.includes(needle);
  }
  if (Array.isArray(hay)) {
    for (const x of hay) if (eq(x, needle)) return true;
    return false;
  }
  // A dict (and its keys view) hashes the needle: a list or dict raises TypeError.
  if ((isDict(hay) || (hay instanceof PyView && hay.kind === 'dict_keys')) && unhashable(needle)) fail(`unhashable type: '${typeName(needle)}'`);
  if (hay instanceof Range || hay instanceof PyView || hay instanceof PyIter) return iterate(hay).some((x) => eq(x, needle));
  if (isDict(hay)) {
    if (hay instanceof Map) {
      if (hay.has(needle)) return true;
      if (typeof needle === 'number' || typeof needle === 'boolean' || needle instanceof PyTuple) for (const k of hay.keys()) if (eq(k, needle)) return true;
      return false;
    }
    return typeof needle === 'string' && Object.hasOwn(hay, needle);
  }
  // Undefined iterates empty, so `x in undefined` is false.
  if (hay === undefined) return false;
  if (hay instanceof Namespace) return fail("argument of type 'Namespace' is not iterable");
  return fail(`argument of type '${typeName(hay)}' is not iterable`);
}

export { floatRepr, percentFormat };
