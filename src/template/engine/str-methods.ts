import {
  bigStr,
  bmp,
  bounds,
  boundSize,
  boundWork,
  dictEntries,
  dictKeys,
  fail,
  isDict,
  isInt,
  length,
  num,
  PyBytes,
  PyObject,
  PyTuple,
  repr,
  str,
  truthy,
  tuple,
  typeName,
} from './values.js';
import { getattr, slice } from './methods.js';
import {
  type PyCharClass,
  pyCapitalize,
  pyCasefold,
  pyIsClass,
  pyIsIdentifier,
  pyIsLower,
  pyIsTitle,
  pyIsUpper,
  pyLower,
  pySwapcase,
  pyTitle,
  pyUpper,
} from './pyunicode.js';

/**
 * Python's str methods that templates call (`message.content.strip()`, `.split('</think>')`,
 * `.format(...)`, ...), with Python's whitespace, code point indexing and Unicode data.
 */
type Kw = Map<string, unknown> | null;

export const NO_METHOD = Symbol('no method');

const WS = ' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

function stripChars(s: string, chars: unknown, left: boolean, right: boolean): string {
  const set = chars === undefined || chars === null ? WS : typeof chars === 'string' ? chars : fail('strip arg must be None or str');
  let a = 0;
  let b = s.length;
  if (left) while (a < b && set.includes(s[a]!)) a++;
  if (right) while (b > a && set.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

export function pyStrip(s: string, chars?: unknown): string {
  return stripChars(s, chars, true, true);
}

function splitWs(s: string, maxsplit: number): string[] {
  const out: string[] = [];
  let i = 0;
  const n = s.length;
  while (i < n) {
    while (i < n && WS.includes(s[i]!)) i++;
    if (i >= n) break;
    if (maxsplit >= 0 && out.length >= maxsplit) {
      out.push(stripChars(s.slice(i), undefined, false, true));
      return out;
    }
    let j = i;
    while (j < n && !WS.includes(s[j]!)) j++;
    out.push(s.slice(i, j));
    i = j;
  }
  return out;
}

export function pySplit(s: string, sep: unknown, maxsplit: unknown): string[] {
  const max = maxsplit === undefined ? -1 : num(maxsplit);
  if (sep === undefined || sep === null) return splitWs(s, max);
  if (typeof sep !== 'string') return fail('must be str or None');
  if (sep === '') return fail('empty separator');
  if (max < 0) return s.split(sep);
  const out: string[] = [];
  let rest = s;
  while (out.length < max) {
    const k = rest.indexOf(sep);
    if (k < 0) break;
    out.push(rest.slice(0, k));
    rest = rest.slice(k + sep.length);
  }
  out.push(rest);
  return out;
}

function rsplit(s: string, sep: unknown, maxsplit: unknown): string[] {
  const max = maxsplit === undefined ? -1 : num(maxsplit);
  if (max < 0) return pySplit(s, sep, undefined);
  if (sep === undefined || sep === null) {
    const parts = splitWs(s, -1);
    if (parts.length <= max + 1) return parts;
    // Rejoin the head as it was in s: find where the kept tail starts.
    let end = s.length;
    const tail = parts.slice(parts.length - max);
    for (let k = tail.length - 1; k >= 0; k--) end = s.lastIndexOf(tail[k]!, end - 1);
    // Python strips only the whitespace it split at: the head keeps its leading whitespace.
    return [stripChars(s.slice(0, end), undefined, false, true), ...tail];
  }
  const str_ = sep as string;
  const out: string[] = [];
  let rest = s;
  while (out.length < max) {
    const k = rest.lastIndexOf(str_);
    if (k < 0) break;
    out.unshift(rest.slice(k + str_.length));
    rest = rest.slice(0, k);
  }
  out.unshift(rest);
  return out;
}

/** What str.splitlines() splits at (\r\n counts as one). */
const LINE_BREAKS = new Set([0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029]);

/** Python str.splitlines(keepends). */
export function pySplitlines(s: string, keepends = false): string[] {
  const out: string[] = [];
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!LINE_BREAKS.has(c)) continue;
    const at = i;
    if (c === 13 && s.charCodeAt(i + 1) === 10) i++;
    out.push(s.slice(last, keepends ? i + 1 : at));
    last = i + 1;
  }
  if (last < s.length) out.push(s.slice(last));
  return out;
}

/** The code point offset and text of s[start:end] (str.find's window); null when start is past the end. */
function strWindow(s: string, start: unknown, end: unknown): { off: number; w: string } | null {
  if ((start === undefined || start === null) && (end === undefined || end === null)) return { off: 0, w: s };
  const n = length(s);
  let a = start === undefined || start === null ? 0 : num(start);
  if (a < 0) a = Math.max(0, a + n);
  if (a > n) return null;
  return { off: a, w: slice(s, a, end ?? null, null) as string };
}

/** str.find / rfind / count over s[start:end], in code points as Python counts them. */
function findIn(s: string, sub: string, start: unknown, end: unknown, last: boolean): number {
  const win = strWindow(s, start, end);
  if (win === null) return -1;
  const k = last ? win.w.lastIndexOf(sub) : win.w.indexOf(sub);
  return k < 0 ? -1 : win.off + (bmp(win.w) ? k : length(win.w.slice(0, k)));
}

function countIn(s: string, sub: string, start: unknown, end: unknown): number {
  const win = strWindow(s, start, end);
  if (win === null) return 0;
  if (sub === '') return length(win.w) + 1;
  return win.w.split(sub).length - 1;
}

function affix(_s: string, arg: unknown, fn: (p: string) => boolean): boolean {
  if (typeof arg === 'string') return fn(arg);
  if (Array.isArray(arg)) return arg.some((p) => (typeof p === 'string' ? fn(p) : fail('tuple for startswith must only contain str')));
  return fail(`startswith first arg must be str or a tuple of str, not ${typeName(arg)}`);
}

/**
 * str.replace (count < 0: all). The result's size is known before it is built (and bounded);
 * the replacement is a function so that `$` in `neu` stays literal.
 */
export function pyReplace(s: string, old: unknown, neu: unknown, count: unknown): string {
  if (typeof old !== 'string' || typeof neu !== 'string') fail('replace() arguments must be str');
  const max = count === undefined || count === null ? -1 : num(count);
  const put = () => neu;
  if (old === '') {
    // An empty `old` matches before each character and at the end.
    let cps = s.length;
    for (let i = 0; i + 1 < s.length; i++) {
      const c = s.charCodeAt(i);
      const d = s.charCodeAt(i + 1);
      if (c >= 0xd800 && c < 0xdc00 && d >= 0xdc00 && d < 0xe000) {
        cps--;
        i++;
      }
    }
    const k = max < 0 ? cps + 1 : Math.min(max, cps + 1);
    boundWork(s.length + k * neu.length);
    if (k >= 16) bounds.tick?.(Math.floor(k / 16));
    if (k === cps + 1) return s.replace(/(?:)/gu, put);
    let n = 0;
    return s.replace(/(?=[\s\S])/gu, () => (n++ < k ? neu : ''));
  }
  let found = 0;
  for (let at = s.indexOf(old); at >= 0 && (max < 0 || found < max); at = s.indexOf(old, at + old.length)) found++;
  boundWork(s.length + found * (neu.length - old.length));
  // Each replacement costs about what a loop iteration does: 1 per 16 counts toward maxIterations.
  if (found >= 16) bounds.tick?.(Math.floor(found / 16));
  if (found === 0) return s;
  // All of them: the native replacement, `$` escaped so that it stays literal.
  if (max < 0) return s.replaceAll(old, neu.replaceAll('$', '$$$$'));
  let n = 0;
  return s.replaceAll(old, (m) => (n++ < found ? neu : m));
}

/** Python's format-spec mini-language, the common part: [[fill]align][sign][0][width][,][.precision][type]. */
function formatSpec(v: unknown, spec: string): string {
  const m = /^(?:(.)?([<>^=]))?([+\- ]?)(0)?(\d+)?(,)?(?:\.(\d+))?([sdfeEgGxXob%])?$/.exec(spec);
  if (!m) return fail(`Invalid format specifier '${spec}'`);
  const [, fillc, align, sign, zero, width, comma, prec, type] = m;
  let out: string;
  const isNum = typeof v === 'number' || typeof v === 'bigint' || v instanceof PyObject;
  if (type === 'f' || type === 'e' || type === 'E' || type === '%' || (prec !== undefined && type === undefined && isNum)) {
    const x = num(v) * (type === '%' ? 100 : 1);
    const p = prec === undefined ? 6 : Number(prec);
    out = type === 'e' || type === 'E' ? x.toExponential(p).replace(/e([+-])(\d)$/, 'e$10$2') : x.toFixed(p);
    if (type === 'E') out = out.toUpperCase();
    if (type === '%') out += '%';
  } else if (type === 'd' || type === 'x' || type === 'X' || type === 'o' || type === 'b') {
    const n = typeof v === 'bigint' ? v : BigInt(Math.trunc(num(v)));
    out = type === 'd' ? bigStr(n) : n.toString(type === 'o' ? 8 : type === 'b' ? 2 : 16);
    if (type === 'X') out = out.toUpperCase();
  } else out = str(v);
  if (prec !== undefined && (type === 's' || (type === undefined && typeof v === 'string'))) out = out.slice(0, Number(prec));
  if (comma) out = out.replace(/^(-?)(\d+)/, (_x, sg: string, d: string) => sg + d.replace(/\B(?=(\d{3})+(?!\d))/g, ','));
  if (sign === '+' && isNum && !out.startsWith('-')) out = `+${out}`;
  else if (sign === ' ' && isNum && !out.startsWith('-')) out = ` ${out}`;
  const w = width === undefined ? 0 : Number(width);
  const fill = fillc ?? (zero && !align ? '0' : ' ');
  const al = align ?? (zero ? '=' : isNum && typeof v !== 'boolean' ? '>' : '<');
  const len = Array.from(out).length;
  if (len >= w) return out;
  const padn = w - len;
  boundWork(out.length + padn * fill.length);
  if (al === '<') return out + fill.repeat(padn);
  if (al === '>') return fill.repeat(padn) + out;
  if (al === '^') return fill.repeat(Math.floor(padn / 2)) + out + fill.repeat(padn - Math.floor(padn / 2));
  const sg = /^[+\- ]/.test(out) ? out[0]! : '';
  return sg + fill.repeat(padn) + out.slice(sg.length);
}

/** str.format: {}, {0}, {name}, {x!r}, {x:spec}; {{ and }} are braces. */
function pyFormat(s: string, a: unknown[], kw: Kw): string {
  let auto = 0;
  return s.replace(
    /\{\{|\}\}|\{([^{}!:]*)(?:!([rsa]))?(?::([^{}]*))?\}/g,
    (whole, field: string | undefined, conv: string | undefined, spec: string | undefined) => {
      if (whole === '{{') return '{';
      if (whole === '}}') return '}';
      const f = field ?? '';
      let v = f === '' ? a[auto++] : /^\d+$/.test(f) ? a[Number(f)] : kw?.get(f.split('.')[0]!);
      for (const part of f.split('.').slice(1)) v = getattr(v, part);
      if (conv === 'r' || conv === 'a') v = repr(v);
      return spec ? formatSpec(v, spec) : str(v);
    },
  );
}

export function strMethod(s: string, name: string, a: unknown[], kw: Kw = null): unknown {
  switch (name) {
    case 'strip':
      return stripChars(s, a[0], true, true);
    case 'lstrip':
      return stripChars(s, a[0], true, false);
    case 'rstrip':
      return stripChars(s, a[0], false, true);
    case 'split':
      return pySplit(s, a[0], a[1]);
    case 'rsplit':
      return rsplit(s, a[0], a[1]);
    case 'splitlines':
      return pySplitlines(s, truthy(a[0] ?? false));
    case 'startswith':
    case 'endswith': {
      const sub = a.length > 1 ? (slice(s, a[1], a[2] ?? null, null) as string) : s;
      return affix(sub, a[0], (p) => (name === 'startswith' ? sub.startsWith(p) : sub.endsWith(p)));
    }
    case 'casefold':
      return pyCasefold(s);
    case 'encode':
      return encode(s, a[0], a[1]);
    case 'rpartition': {
      const sep = str(a[0]);
      if (sep === '') fail('empty separator');
      const k = s.lastIndexOf(sep);
      return k < 0 ? tuple(['', '', s]) : tuple([s.slice(0, k), sep, s.slice(k + sep.length)]);
    }
    case 'expandtabs': {
      const size = a[0] === undefined ? 8 : num(a[0]);
      let col = 0;
      let out = '';
      for (const ch of s) {
        if (ch === '\t') {
          const n = size > 0 ? size - (col % size) : 0;
          if (out.length + n > 0x100000) boundSize(out.length + n + s.length);
          out += ' '.repeat(n);
          col += n;
        } else {
          out += ch;
          col = ch === '\n' || ch === '\r' ? 0 : col + 1;
        }
      }
      return out;
    }
    case 'replace':
      return pyReplace(s, a[0], a[1], a[2]);
    case 'upper':
      return pyUpper(s);
    case 'lower':
      return pyLower(s);
    case 'title':
      return pyTitle(s);
    case 'capitalize':
      return pyCapitalize(s);
    case 'swapcase':
      return pySwapcase(s);
    case 'find':
    case 'index':
    case 'rfind':
    case 'rindex': {
      if (typeof a[0] !== 'string') fail(`must be str, not ${typeName(a[0])}`);
      const k = findIn(s, a[0], a[1], a[2], name[0] === 'r');
      if (k < 0 && name.endsWith('index')) fail('substring not found');
      return k;
    }
    case 'count':
      if (typeof a[0] !== 'string') fail(`must be str, not ${typeName(a[0])}`);
      return countIn(s, a[0], a[1], a[2]);
    case 'join': {
      const parts = Array.from(iterStrings(a[0]));
      let n = 0;
      for (const p of parts) n += p.length + s.length;
      boundWork(n);
      return parts.join(s);
    }
    case 'isdigit':
    case 'isnumeric':
    case 'isdecimal':
    case 'isalpha':
    case 'isalnum':
    case 'isspace':
    case 'isprintable':
      return pyIsClass(s, name.slice(2) as PyCharClass);
    case 'isascii':
      return /^[\0-\x7f]*$/.test(s);
    case 'isidentifier':
      return pyIsIdentifier(s);
    case 'islower':
      return pyIsLower(s);
    case 'isupper':
      return pyIsUpper(s);
    case 'istitle':
      return pyIsTitle(s);
    case 'center':
    case 'ljust':
    case 'rjust': {
      const w = num(a[0]);
      const fill = a[1] === undefined ? ' ' : str(a[1]);
      if (length(fill) !== 1) fail('The fill character must be exactly one character long');
      const len = Array.from(s).length;
      if (w <= len) return s;
      const total = w - len;
      boundWork(s.length + total * fill.length);
      if (name === 'ljust') return s + fill.repeat(total);
      if (name === 'rjust') return fill.repeat(total) + s;
      const left = Math.floor(total / 2) + (total & w & 1);
      return fill.repeat(left) + s + fill.repeat(total - left);
    }
    case 'zfill': {
      const w = num(a[0]);
      const len = Array.from(s).length;
      if (w <= len) return s;
      const sign = s[0] === '-' || s[0] === '+' ? s[0] : '';
      boundWork(s.length + w - len);
      return sign + '0'.repeat(w - len) + s.slice(sign.length);
    }
    case 'removeprefix':
      return s.startsWith(str(a[0])) ? s.slice(str(a[0]).length) : s;
    case 'removesuffix':
      return str(a[0]) !== '' && s.endsWith(str(a[0])) ? s.slice(0, s.length - str(a[0]).length) : s;
    case 'partition': {
      const sep = str(a[0]);
      if (sep === '') fail('empty separator');
      const k = s.indexOf(sep);
      return k < 0 ? tuple([s, '', '']) : tuple([s.slice(0, k), sep, s.slice(k + sep.length)]);
    }
    case 'format':
      return pyFormat(s, a, kw);
    case 'format_map':
      return pyFormat(s, [], isDict(a[0]) ? new Map(dictEntries(a[0]).map(([k, v]) => [str(k), v])) : fail('format_map() argument must be a mapping'));
    default:
      return NO_METHOD;
  }
}

/** str.encode(encoding, errors) for the codecs a template could name: UTF-8, ASCII, Latin-1. */
function encode(s: string, encoding: unknown, errors: unknown): PyBytes {
  const enc = str(encoding ?? 'utf-8')
    .toLowerCase()
    .replace(/[-_ ]/g, '');
  const mode = str(errors ?? 'strict');
  const limit =
    enc === 'utf8'
      ? -1
      : enc === 'ascii' || enc === 'usascii'
        ? 0x80
        : enc === 'latin1' || enc === 'iso88591' || enc === 'l1'
          ? 0x100
          : fail(`unknown encoding: ${str(encoding)}`);
  const out: number[] = [];
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const bad = limit < 0 ? cp >= 0xd800 && cp <= 0xdfff : cp >= limit;
    if (bad) {
      if (mode === 'ignore') continue;
      if (mode === 'replace') {
        out.push(0x3f);
        continue;
      }
      fail(`'${limit < 0 ? 'utf-8' : limit === 0x80 ? 'ascii' : 'latin-1'}' codec can't encode character '\\u${cp.toString(16).padStart(4, '0')}'`);
    }
    if (limit < 0) for (const b of new TextEncoder().encode(ch)) out.push(b);
    else out.push(cp);
  }
  return new PyBytes(Uint8Array.from(out));
}

function* iterStrings(v: unknown): Generator<string> {
  const items = Array.isArray(v) ? v : typeof v === 'string' ? Array.from(v) : isDict(v) ? dictKeys(v) : fail(`can only join an iterable`);
  for (const x of items) {
    if (typeof x !== 'string') fail(`sequence item: expected str instance, ${typeName(x)} found`);
    yield x;
  }
}

export const STR_METHODS = new Set([
  'strip',
  'lstrip',
  'rstrip',
  'split',
  'rsplit',
  'splitlines',
  'startswith',
  'endswith',
  'replace',
  'upper',
  'lower',
  'title',
  'capitalize',
  'swapcase',
  'find',
  'index',
  'rfind',
  'rindex',
  'count',
  'join',
  'isdigit',
  'isnumeric',
  'isdecimal',
  'isalpha',
  'isalnum',
  'isspace',
  'isprintable',
  'isascii',
  'isidentifier',
  'format_map',
  'islower',
  'isupper',
  'istitle',
  'encode',
  'center',
  'ljust',
  'rjust',
  'zfill',
  'removeprefix',
  'removesuffix',
  'partition',
  'rpartition',
  'casefold',
  'expandtabs',
  'format',
]);

/**
 * Python's signatures for the str methods: how many arguments are required, then one letter per
 * parameter (s str, S str or None, i int, I int or None, c one character, t str or tuple of
 * str, x anything), and the parameters that may be passed by keyword. Arguments that do not fit
 * raise TypeError in Python; here E_TEMPLATE.
 */
const SIGS: Record<string, readonly [number, string, (readonly string[])?]> = {
  strip: [0, 'S'],
  lstrip: [0, 'S'],
  rstrip: [0, 'S'],
  split: [0, 'SI', ['sep', 'maxsplit']],
  rsplit: [0, 'SI', ['sep', 'maxsplit']],
  splitlines: [0, 'i', ['keepends']],
  startswith: [1, 'tII'],
  endswith: [1, 'tII'],
  replace: [2, 'ssi'],
  find: [1, 'sII'],
  rfind: [1, 'sII'],
  index: [1, 'sII'],
  rindex: [1, 'sII'],
  count: [1, 'sII'],
  join: [1, 'x'],
  center: [1, 'ic'],
  ljust: [1, 'ic'],
  rjust: [1, 'ic'],
  zfill: [1, 'i'],
  removeprefix: [1, 's'],
  removesuffix: [1, 's'],
  partition: [1, 's'],
  rpartition: [1, 's'],
  expandtabs: [0, 'i', ['tabsize']],
  encode: [0, 'ss', ['encoding', 'errors']],
  format_map: [1, 'x'],
};

function fits(kind: string, v: unknown): boolean {
  switch (kind) {
    case 's':
      return typeof v === 'string';
    case 'S':
      return typeof v === 'string' || v === null;
    case 'i':
      return isInt(v) || typeof v === 'boolean';
    case 'I':
      return isInt(v) || typeof v === 'boolean' || v === null;
    case 'c':
      return typeof v === 'string' && length(v) === 1;
    case 't':
      return typeof v === 'string' || (v instanceof PyTuple && v.every((x) => typeof x === 'string'));
    default:
      return true;
  }
}

/** The positional arguments of `str.name(...)`, keywords placed, checked against Python's signature. */
export function methodArgs(name: string, args: unknown[], kwargs: Kw): unknown[] {
  const sig = SIGS[name];
  if (sig === undefined) {
    // format takes anything; the no-argument methods (upper, isalpha, ...) take nothing.
    if (name === 'format') return args;
    if (args.length > 0 || (kwargs !== null && kwargs.size > 0)) fail(`str.${name}() takes no arguments (${args.length} given)`);
    return args;
  }
  const [min, kinds, names = []] = sig;
  let a = args;
  if (kwargs !== null && kwargs.size > 0) {
    a = [...args];
    for (const [k, v] of kwargs) {
      const at = names.indexOf(k);
      if (at < 0) fail(`str.${name}() got an unexpected keyword argument '${k}'`);
      if (at < args.length) fail(`argument for str.${name}() given by name ('${k}') and position (${at + 1})`);
      a[at] = v;
    }
  }
  if (a.length < min) fail(`str.${name}() takes at least ${min} argument${min === 1 ? '' : 's'} (${a.length} given)`);
  if (a.length > kinds.length) fail(`str.${name}() takes at most ${kinds.length} argument${kinds.length === 1 ? '' : 's'} (${a.length} given)`);
  for (let i = 0; i < a.length; i++) {
    if (i in a && !fits(kinds[i]!, a[i])) fail(`str.${name}() argument ${i + 1} has the wrong type: ${typeName(a[i])}`);
  }
  return a;
}
