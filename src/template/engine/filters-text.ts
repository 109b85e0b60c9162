import { htmlEscape } from './markup.js';
import { getitem, pySplitlines, pyStrip } from './methods.js';
import { pyLower, pyUpper } from './pyunicode.js';
import {
  bigStr,
  boundSize,
  boundWork,
  strCompare,
  dictEntries,
  fail,
  float,
  isDict,
  iterate,
  length,
  num,
  PyBytes,
  PyIter,
  PyTuple,
  PyView,
  Range,
  repr,
  str,
  truthy,
  typeName,
} from './values.js';

/**
 * Jinja2's text filters (jinja2/filters.py, jinja2/utils.py for urlize) and Python's `%`
 * formatting: what turns a value into display text. Python's own library behaviour they rest on
 * (textwrap, pprint, urllib.parse.quote, float formatting) is reimplemented from its documented
 * rules and checked against Python by the semantics table.
 */

/** Python's whitespace (str.isspace / str.split()). */
export const PY_WS =
  ' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

function cpLen(s: string): number {
  return length(s);
}

/**
 * Python's `'%.Nf' % x` / `format(x, '.Nf')`: the exact binary value rounded half-even
 * (0.25 → '0.2'); toFixed rounds the exact value too but breaks exact ties upwards.
 */
export function pyFixed(x: number, p: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (p > 100) fail('precision too big');
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const a = Math.abs(x);
  if (a >= 1e21) return `${sign}${BigInt(a).toString()}${p > 0 ? `.${'0'.repeat(p)}` : ''}`;
  // A tie at p digits is exactly representable, so its expansion ends with that 5 well within p + 40 digits.
  const exact = a.toFixed(Math.min(100, p + 40));
  const [intPart, frac = ''] = exact.split('.') as [string, string?];
  if (/^50*$/.test(frac.slice(p))) {
    const last = p > 0 ? frac[p - 1]! : intPart[intPart.length - 1]!;
    if (Number(last) % 2 === 0) return sign + (p > 0 ? `${intPart}.${frac.slice(0, p)}` : intPart);
  }
  return sign + a.toFixed(p);
}

/** Python's `fmt % args` (printf-style): positional args, or a mapping for `%(key)s`. */
function printf(fmt: string, args: unknown[], mapping: Record<string, unknown> | Map<unknown, unknown> | null): string {
  let i = 0;
  const out = fmt.replace(
    /%(?:\(([^)]*)\))?([-+ 0#]*)(\d+)?(?:\.(\d+))?[hlL]?([sdiufrxXoeEcaA%])/g,
    (_m, key: string | undefined, flags: string, width: string | undefined, prec: string | undefined, conv: string) => {
      if (conv === '%') return '%';
      let v: unknown;
      if (key !== undefined) {
        if (mapping === null) fail('format requires a mapping');
        v = getitem(mapping, key);
        if (v === undefined) fail(`KeyError: ${repr(key)}`);
      } else {
        if (i >= args.length) fail('not enough arguments for format string');
        v = args[i++];
      }
      let s: string;
      const int = () => (typeof v === 'bigint' ? v : BigInt(Math.trunc(num(v))));
      switch (conv) {
        case 's':
          s = str(v);
          if (prec !== undefined) s = Array.from(s).slice(0, Number(prec)).join('');
          break;
        case 'r':
        case 'a':
          s = repr(v);
          break;
        case 'd':
        case 'i':
        case 'u':
          s = bigStr(int());
          break;
        case 'f':
          s = pyFixed(num(v), prec === undefined ? 6 : Number(prec));
          break;
        case 'x':
        case 'X':
        case 'o': {
          const n = int();
          s = (n < 0n ? '-' : '') + (n < 0n ? -n : n).toString(conv === 'o' ? 8 : 16);
          if (flags.includes('#')) s = s.replace(/^(-?)/, `$1${conv === 'o' ? '0o' : '0x'}`);
          if (conv === 'X') s = s.toUpperCase();
          break;
        }
        case 'e':
        case 'E': {
          const t = num(v).toExponential(prec === undefined ? 6 : Number(prec));
          s = t.replace(/e([+-])(\d)$/, 'e$10$2');
          if (conv === 'E') s = s.toUpperCase();
          break;
        }
        case 'c':
          s = typeof v === 'string' ? v : String.fromCodePoint(num(v));
          break;
        default:
          s = str(v);
      }
      if (/[diufxXoeE]/.test(conv) && !s.startsWith('-')) {
        if (flags.includes('+')) s = `+${s}`;
        else if (flags.includes(' ')) s = ` ${s}`;
      }
      if (width !== undefined && cpLen(s) < Number(width)) {
        const pad = Number(width) - cpLen(s);
        boundWork(s.length + pad);
        if (flags.includes('-')) s += ' '.repeat(pad);
        else if (flags.includes('0') && /[diufxXoeE]/.test(conv)) {
          const sg = /^[+ -]/.test(s) ? s[0]! : '';
          s = sg + '0'.repeat(pad) + s.slice(sg.length);
        } else s = ' '.repeat(pad) + s;
      }
      return s;
    },
  );
  if (mapping === null && i < args.length) fail('not all arguments converted during string formatting');
  return out;
}

/** Python `fmt % args`: a tuple spreads; a mapping serves `%(key)s`; anything else is one argument. */
export function percentFormat(fmt: string, v: unknown): string {
  if (isDict(v) && /%\(/.test(fmt)) return printf(fmt, [], v);
  // Anything with __getitem__ but a tuple or str (a dict, list, range, Undefined) is taken as a
  // mapping, which a format without conversions ignores.
  const mappingLike = isDict(v) || v === undefined || v instanceof Range || (Array.isArray(v) && !(v instanceof PyTuple));
  if (mappingLike && !/%[^%]/.test(fmt.replace(/%%/g, ''))) return fmt.replace(/%%/g, '%');
  return printf(fmt, v instanceof PyTuple ? [...v] : [v], null);
}

/** jinja2.filters.do_filesizeformat. */
export function filesizeformat(v: unknown, binary: unknown): string {
  if (v === undefined) fail('float() of an undefined value');
  let bytes: number;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase().replace(/_/g, '');
    if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$|^[+-]?(inf|infinity|nan)$/.test(s)) fail(`could not convert string to float: ${repr(v)}`);
    bytes = /inf/.test(s) ? (s.startsWith('-') ? -Infinity : Infinity) : s.endsWith('nan') ? NaN : Number(s);
  } else bytes = num(v);
  const bin = truthy(binary);
  const base = bin ? 1024 : 1000;
  const prefixes = bin ? ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB'] : ['kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
  if (bytes === 1) return '1 Byte';
  if (bytes < base) {
    if (!Number.isFinite(bytes)) fail('cannot convert float infinity or NaN to integer');
    return `${Math.trunc(bytes)} Bytes`;
  }
  let unit = 0;
  for (let i = 0; i < prefixes.length; i++) {
    unit = base ** (i + 2);
    if (bytes < unit) return `${pyFixed((base * bytes) / unit, 1)} ${prefixes[i]}`;
  }
  return `${pyFixed((base * bytes) / unit, 1)} ${prefixes[prefixes.length - 1]}`;
}

const URL_SAFE = /[A-Za-z0-9_.\-~]/;

/** urllib.parse.quote_from_bytes over UTF-8, as jinja2.utils.url_quote calls it. */
function urlQuote(v: unknown, forQs: boolean): string {
  const s = str(v);
  if (/[\ud800-\udfff]/.test(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''))) fail("'utf-8' codec can't encode a surrogate: surrogates not allowed");
  let out = '';
  for (const byte of new TextEncoder().encode(s)) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && (URL_SAFE.test(ch) || (!forQs && ch === '/')) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return forQs ? out.replace(/%20/g, '+') : out;
}

/** jinja2.filters.do_urlencode: a string (or any non-iterable) is quoted; a dict or pairs become a query string. */
export function urlencode(v: unknown): string {
  // A str, or anything not iterable (None, numbers, bools), is quoted as str(value).
  const iterable = v === undefined || Array.isArray(v) || isDict(v) || v instanceof PyIter || v instanceof PyView || v instanceof Range || v instanceof PyBytes;
  if (typeof v === 'string' || !iterable) return urlQuote(v, false);
  const pairs = isDict(v) ? dictEntries(v) : iterate(v).map((p) => iterate(p) as unknown[]);
  return pairs
    .map((p) => {
      if (p.length !== 2) fail(`dictionary update sequence element has length ${p.length}; 2 is required`);
      return `${urlQuote(p[0], true)}=${urlQuote(p[1], true)}`;
    })
    .join('&');
}

/** jinja2.filters.do_xmlattr (autoescape off: the result is a plain string). */
export function xmlattr(d: unknown, autospace: unknown): string {
  if (d === undefined) fail("'items' of an undefined value");
  if (!isDict(d)) fail(`'${typeName(d)}' object has no attribute 'items'`);
  const items: string[] = [];
  for (const [k, v] of dictEntries(d)) {
    if (v === null || v === undefined) continue;
    const key = str(k);
    if (/[ \t\n\r\v\f/>=]/.test(key)) fail(`Invalid character in attribute name: ${repr(k)}`);
    items.push(`${htmlEscape(key)}="${htmlEscape(str(v))}"`);
  }
  const rv = items.join(' ');
  return truthy(autospace) && rv ? ` ${rv}` : rv;
}

// textwrap.TextWrapper's chunking (Lib/textwrap.py wordsep_re), with Python's Unicode \w.
const TW_WS = '[\\t\\n\\x0b\\x0c\\r ]';
const TW_NWS = '[^\\t\\n\\x0b\\x0c\\r ]';
const W = '[\\p{L}\\p{N}_]';
const LETTER = '[\\p{L}\\p{Nl}\\p{No}_]';
const WORD_PUNCT = `(?:${W}|[!"'&.,?])`;
const WORDSEP = new RegExp(
  `(${TW_WS}+|(?<=${WORD_PUNCT})-{2,}(?=${W})|${TW_NWS}+?(?:-(?:(?<=${LETTER}{2}-)|(?<=${LETTER}-${LETTER}-))(?=${LETTER}-?${LETTER})|(?=${TW_WS}|$)|(?<=${WORD_PUNCT})(?=-{2,}${W})))`,
  'u',
);
const WORDSEP_SIMPLE = new RegExp(`(${TW_WS}+)`, 'u');

/** textwrap.wrap(text, width, expand_tabs=False, replace_whitespace=False, break_long_words, break_on_hyphens). */
function textwrap(text: string, width: number, breakLong: boolean, breakHyphens: boolean): string[] {
  if (width <= 0) fail(`invalid width ${width} (must be > 0)`);
  const chunks = text
    .split(breakHyphens ? WORDSEP : WORDSEP_SIMPLE)
    .filter((c) => c)
    .map((c) => Array.from(c));
  chunks.reverse();
  const blank = (c: string[]) => pyStrip(c.join('')) === '';
  const lines: string[] = [];
  while (chunks.length) {
    const cur: string[][] = [];
    let curLen = 0;
    if (lines.length && blank(chunks[chunks.length - 1]!)) chunks.pop();
    while (chunks.length) {
      const l = chunks[chunks.length - 1]!.length;
      if (curLen + l > width) break;
      cur.push(chunks.pop()!);
      curLen += l;
    }
    if (chunks.length && chunks[chunks.length - 1]!.length > width) {
      // _handle_long_word
      const spaceLeft = width < 1 ? 1 : width - curLen;
      if (breakLong) {
        let end = spaceLeft;
        const chunk = chunks[chunks.length - 1]!;
        if (breakHyphens && chunk.length > spaceLeft) {
          const hyphen = chunk.slice(0, spaceLeft).lastIndexOf('-');
          if (hyphen > 0 && chunk.slice(0, hyphen).some((c) => c !== '-')) end = hyphen + 1;
        }
        cur.push(chunk.slice(0, end));
        chunks[chunks.length - 1] = chunk.slice(end);
      } else if (cur.length === 0) cur.push(chunks.pop()!);
      curLen = cur.reduce((n, c) => n + c.length, 0);
    }
    if (cur.length && blank(cur[cur.length - 1]!)) cur.pop();
    if (cur.length) lines.push(cur.map((c) => c.join('')).join(''));
  }
  return lines;
}

/** jinja2.filters.do_wordwrap: each line of the value wrapped on its own, joined by wrapstring. */
export function wordwrap(s: unknown, width: unknown, breakLong: unknown, wrapstring: unknown, breakHyphens: unknown): string {
  if (s === undefined) fail("'splitlines' of an undefined value");
  if (typeof s !== 'string') fail(`'${typeName(s)}' object has no attribute 'splitlines'`);
  const sep = wrapstring === null || wrapstring === undefined ? '\n' : str(wrapstring);
  const w = num(width);
  const lines = pySplitlines(s).flatMap((line) => {
    const wrapped = textwrap(line, w, truthy(breakLong), truthy(breakHyphens));
    return wrapped.length ? wrapped : [''];
  });
  boundWork(s.length + lines.length * sep.length);
  return lines.join(sep);
}

// jinja2.utils._http_re and _email_re, with Python's Unicode \w and \d.
const HTTP_RE =
  /^((https?:\/\/|www\.)(([\p{L}\p{N}_%-]+\.)+)?([a-z]{2,63}|xn--[\p{L}\p{N}_%]{2,59})|([\p{L}\p{N}_%-]{2,63}\.)+(com|net|int|edu|gov|org|info|mil)|(https?:\/\/)((([\p{Nd}]{1,3})(\.[\p{Nd}]{1,3}){3})|(\[([\p{Nd}a-f]{0,4}:){2}([\p{Nd}a-f]{0,4}:?){1,6}\])))(?::[\p{Nd}]{1,5})?(?:[/?#][^\s]*)?$/iu;
const EMAIL_RE = /^[^\s]+@[\p{L}\p{N}_][\p{L}\p{N}_.-]*\.[\p{L}\p{N}_]+$/u;

/** jinja2.utils.urlize with the filter's defaults (rel="noopener" from the environment's policies). */
export function urlize(text: unknown, trimLimit: unknown, nofollow: unknown, target: unknown, rel: unknown): string {
  const relParts = new Set(
    str(rel ?? '')
      .split(/\s+/)
      .filter(Boolean),
  );
  if (truthy(nofollow)) relParts.add('nofollow');
  relParts.add('noopener');
  const relValue = [...relParts].sort().join(' ');
  const relAttr = relValue ? ` rel="${htmlEscape(relValue)}"` : '';
  const targetAttr = target !== null && target !== undefined && truthy(target) ? ` target="${htmlEscape(str(target))}"` : '';
  const limit = trimLimit === null || trimLimit === undefined ? null : num(trimLimit);
  const trim = (x: string) => (limit !== null && cpLen(x) > limit ? `${Array.from(x).slice(0, limit).join('')}...` : x);
  const words = htmlEscape(str(text)).split(/(\s+)/u);
  for (let i = 0; i < words.length; i++) {
    let middle = words[i]!;
    let head = '';
    let tail = '';
    const lead = /^([(<]|&lt;)+/.exec(middle);
    if (lead) {
      head = lead[0];
      middle = middle.slice(head.length);
    }
    if (/([)>.,\n]|&gt;)$/.test(middle)) {
      const m = /([)>.,\n]|&gt;)+$/.exec(middle);
      if (m) {
        tail = m[0];
        middle = middle.slice(0, m.index);
      }
    }
    // Prefer balancing parentheses in URLs over ignoring a trailing character.
    for (const [open, close] of [
      ['(', ')'],
      ['<', '>'],
      ['&lt;', '&gt;'],
    ] as const) {
      const opens = middle.split(open).length - 1;
      if (opens <= middle.split(close).length - 1) continue;
      const moves = Math.min(opens, tail.split(close).length - 1);
      for (let k = 0; k < moves; k++) {
        const end = tail.indexOf(close) + close.length;
        middle += tail.slice(0, end);
        tail = tail.slice(end);
      }
    }
    if (HTTP_RE.test(middle)) {
      const href = middle.startsWith('https://') || middle.startsWith('http://') ? middle : `https://${middle}`;
      middle = `<a href="${href}"${relAttr}${targetAttr}>${trim(middle)}</a>`;
    } else if (middle.startsWith('mailto:') && EMAIL_RE.test(middle.slice(7))) {
      middle = `<a href="${middle}">${middle.slice(7)}</a>`;
    } else if (middle.includes('@') && !middle.startsWith('www.') && !middle.startsWith('@') && !middle.includes(':') && EMAIL_RE.test(middle)) {
      middle = `<a href="mailto:${middle}">${middle}</a>`;
    }
    words[i] = head + middle + tail;
  }
  return words.join('');
}

/** pprint.pformat(x) (width 80, indent 1, dicts sorted), over the values a template has. */
export function pformat(v: unknown): string {
  let out = '';
  const width = 80;
  const sortedItems = (d: Record<string, unknown> | Map<unknown, unknown>) => {
    const items = dictEntries(d);
    try {
      return items.slice().sort((a, b) => pyLess(a[0], b[0]));
    } catch {
      // Python then orders by (type name, id): the type name part is what can be reproduced.
      return items.slice().sort((a, b) => (typeName(a[0]) < typeName(b[0]) ? -1 : typeName(a[0]) > typeName(b[0]) ? 1 : 0));
    }
  };
  const safeRepr = (x: unknown): string => {
    if (isDict(x))
      return `{${sortedItems(x)
        .map(([k, y]) => `${safeRepr(k)}: ${safeRepr(y)}`)
        .join(', ')}}`;
    if (Array.isArray(x)) {
      const parts = x.map(safeRepr);
      return x instanceof PyTuple ? (parts.length === 1 ? `(${parts[0]},)` : `(${parts.join(', ')})`) : `[${parts.join(', ')}]`;
    }
    return repr(x);
  };
  const format = (x: unknown, indent: number, allowance: number, level: number): void => {
    const rep = safeRepr(x);
    if (cpLen(rep) <= width - indent - allowance) {
      out += rep;
      return;
    }
    if (isDict(x)) {
      out += '{';
      const items = sortedItems(x);
      const ind = indent + 1;
      items.forEach(([k, y], i) => {
        const last = i === items.length - 1;
        const krep = safeRepr(k);
        out += `${krep}: `;
        format(y, ind + cpLen(krep) + 2, last ? allowance + 1 : 1, level + 1);
        if (!last) out += `,\n${' '.repeat(ind)}`;
      });
      out += '}';
    } else if (Array.isArray(x)) {
      const tup = x instanceof PyTuple;
      const end = tup ? (x.length === 1 ? ',)' : ')') : ']';
      out += tup ? '(' : '[';
      x.forEach((y, i) => {
        if (i > 0) out += `,\n${' '.repeat(indent + 1)}`;
        format(y, indent + 1, i === x.length - 1 ? allowance + end.length : 1, level + 1);
      });
      out += end;
    } else if (typeof x === 'string' && x !== '') {
      out += pformatStr(x, indent, allowance, level + 1, width);
    } else out += rep;
  };
  format(v, 0, 0, 0);
  return out;
}

/** Python `a < b` for sort keys; throws where Python raises TypeError. */
function pyLess(a: unknown, b: unknown): number {
  const num_ = (x: unknown) => typeof x === 'number' || typeof x === 'boolean' || typeof x === 'bigint';
  if (typeof a === 'string' && typeof b === 'string') return strCompare(a, b);
  if (num_(a) && num_(b)) return Number(a) - Number(b);
  throw new TypeError('unorderable');
}

/** pprint's _pprint_str: a long string split at whitespace into adjacent literals. */
function pformatStr(s: string, indent0: number, allowance0: number, level: number, width: number): string {
  let indent = indent0;
  let allowance = allowance0;
  const lines = pySplitlines(s, true);
  if (level === 1) {
    indent += 1;
    allowance += 1;
  }
  const maxWidth = width - indent;
  let maxWidth1 = maxWidth;
  const chunks: string[] = [];
  let rep = '';
  lines.forEach((line, i) => {
    rep = repr(line);
    if (i === lines.length - 1) maxWidth1 -= allowance;
    if (cpLen(rep) <= maxWidth1) chunks.push(rep);
    else {
      const parts = line.match(/[^\s]*\s*/gu)!.filter((p) => p !== '');
      let maxWidth2 = maxWidth;
      let current = '';
      parts.forEach((part, j) => {
        const candidate = current + part;
        if (j === parts.length - 1 && i === lines.length - 1) maxWidth2 -= allowance;
        if (cpLen(repr(candidate)) > maxWidth2) {
          if (current) chunks.push(repr(current));
          current = part;
        } else current = candidate;
      });
      if (current) chunks.push(repr(current));
    }
  });
  if (chunks.length === 1) return rep;
  const body = chunks.join(`\n${' '.repeat(indent)}`);
  return level === 1 ? `(${body})` : body;
}

/** jinja2.filters.do_title: each run after a space, dash or opening bracket is item[0].upper() + item[1:].lower(). */
export function titleFilter(s: string): string {
  return s
    .split(/([-\s({[<]+)/u)
    .map((item) => {
      if (!item) return item;
      const cp = item.codePointAt(0)!;
      const n = cp > 0xffff ? 2 : 1;
      return pyUpper(item.slice(0, n)) + pyLower(item.slice(n));
    })
    .join('');
}

/** jinja2.filters.do_center: str.center. */
export function center(s: string, width: number): string {
  const len = cpLen(s);
  if (width <= len) return s;
  const total = width - len;
  boundWork(s.length + total);
  const left = Math.floor(total / 2) + (total & width & 1);
  return ' '.repeat(left) + s + ' '.repeat(total - left);
}

/** jinja2.filters.do_indent, with str.splitlines; the value must be a string (Jinja2 appends "\n" to it). */
export function indentFilter(s: unknown, width: unknown, first: unknown, blank: unknown): string {
  if (typeof s !== 'string') fail(`can only concatenate str (not "${typeName(s)}") to str`);
  if (typeof width !== 'string') boundSize(num(width ?? 4));
  const pad = typeof width === 'string' ? width : ' '.repeat(num(width ?? 4));
  const lines = pySplitlines(`${s}\n`);
  boundWork(s.length + (lines.length + 1) * pad.length);
  let rv: string;
  if (truthy(blank)) rv = lines.join(`\n${pad}`);
  else {
    rv = lines.shift() ?? '';
    if (lines.length) rv += `\n${lines.map((l) => (l ? pad + l : l)).join('\n')}`;
  }
  return truthy(first) ? pad + rv : rv;
}

/** jinja2.filters.do_truncate. `len(s)` first: anything with a length that fits comes back as it is. */
export function truncate(v: unknown, lenArg: unknown, killwordsArg: unknown, endArg: unknown, leewayArg: unknown): unknown {
  const len = num(lenArg);
  const end = str(endArg);
  const leeway = num(leewayArg);
  if (len < cpLen(end)) fail(`expected length >= ${cpLen(end)}, got ${len}`);
  if (leeway < 0) fail(`expected leeway >= 0, got ${leeway}`);
  if (length(v) <= len + leeway) return v;
  if (typeof v !== 'string') fail(`'${typeName(v)}' object is not subscriptable by a slice here`);
  const cs = Array.from(v);
  if (truthy(killwordsArg)) return cs.slice(0, len - cpLen(end)).join('') + end;
  const cut = cs.slice(0, len - cpLen(end)).join('');
  const sp = cut.lastIndexOf(' ');
  return (sp >= 0 ? cut.slice(0, sp) : cut) + end;
}

/** jinja2.filters.do_striptags: Markup.striptags (comments and tags removed, entities unescaped, whitespace collapsed). */
export function striptags(s: string): string {
  const text = s
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<[^>]*>/g, '')
    .split(/[\s]+/u)
    .filter(Boolean)
    .join(' ');
  return text.replace(/&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos|#39|#34);/gi, (m, e: string) => {
    const k = e.toLowerCase();
    if (k.startsWith('#x')) return String.fromCodePoint(parseInt(k.slice(2), 16));
    if (k.startsWith('#')) return String.fromCodePoint(Number(k.slice(1)));
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[k] ?? m;
  });
}

export { float, htmlEscape };
