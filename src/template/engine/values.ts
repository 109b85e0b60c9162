/**
 * Python's value model, over plain JavaScript data, as a Jinja2 template sees it.
 *
 * How JavaScript values map (the context a caller passes is plain JSON-like data, which
 * transformers receives from json.loads):
 * - `undefined` is Jinja2's Undefined (prints empty, iterates empty, is false; an attribute of it
 *   or arithmetic on it raises UndefinedError);
 * - `null` is None; booleans are bool;
 * - a number that is an integer below 1e21 in magnitude is an int, any other number is a float
 *   (JSON.stringify writes 1e21 and up in exponent form, which json.loads makes a float); a
 *   float whose value is integral (Python's `1.0`) is a PyFloat box (json.loads of tool-call
 *   arguments makes them, and so does `/`); a bigint is an int (exact big integers from JSON);
 * - a string is str; an array is list (a PyTuple is a tuple);
 * - a Map or any other object is a dict (keys in Map / Object.keys order);
 * - Namespace, Macro, LoopState and the engine's callables are the template's own objects.
 */
export class PyObject {}

/** A float with an integral value (a JS number that is not an integer is a float already). */
export class PyFloat extends PyObject {
  constructor(readonly v: number) {
    super();
  }
}

export class PyTuple extends Array<unknown> {}

export function tuple(items: unknown[]): PyTuple {
  const t = new PyTuple();
  for (let i = 0; i < items.length; i++) t.push(items[i]);
  return t;
}

/** `namespace(...)`: the one mutable object a template has. `id` identifies it for incremental renders. */
export class Namespace extends PyObject {
  readonly attrs = new Map<string, unknown>();
  constructor(
    readonly site: number,
    readonly born: number,
  ) {
    super();
  }
}

/**
 * Set while an iteration of an incrementally rendered loop is recorded (memo.ts): namespace
 * reads that do not go through the compiled `ns.key` (a filter's attribute lookup, printing a
 * namespace whole) are reported here.
 */
export const nsHook: { read: ((ns: Namespace, key: string, v: unknown) => void) | null; whole: ((ns: Namespace) => void) | null } = { read: null, whole: null };

/** A callable the engine made (macro, bound method, global): called with positional and keyword arguments. */
export class PyCallable extends PyObject {
  constructor(
    readonly name: string,
    readonly fn: (args: unknown[], kwargs: Map<string, unknown> | null) => unknown,
    /** For incremental renders: callables with the same tag behave the same (a macro's node, a global's name). */
    readonly tag: unknown = undefined,
  ) {
    super();
  }
  override toString(): string {
    return `<function ${this.name}>`;
  }
}

/** A dict mapping that prints as the JSON text it came from (tool-call arguments; see render.ts). */
export class TextMap extends Map<unknown, unknown> {
  constructor(
    entries: Iterable<readonly [unknown, unknown]>,
    readonly text: string,
  ) {
    super(entries);
  }
}

/**
 * A Python iterator: what Jinja2's map, select, reject, selectattr, rejectattr, unique, batch,
 * slice and items filters return (generators), and reverse of a list (list_reverseiterator).
 * Single use (a second loop over it sees nothing), always true, no len(), not JSON.
 */
export class PyIter extends PyObject {
  pos = 0;
  constructor(
    readonly items: readonly unknown[],
    readonly kind: string = 'generator',
  ) {
    super();
  }
  take(): readonly unknown[] {
    const rest = this.pos === 0 ? this.items : this.items.slice(this.pos);
    this.pos = this.items.length;
    return rest;
  }
}

/** dict.items() / keys() / values(): re-iterable, sized, printed as dict_items([...]). */
export class PyView extends PyObject {
  constructor(
    readonly items: readonly unknown[],
    readonly kind: 'dict_items' | 'dict_keys' | 'dict_values',
  ) {
    super();
  }
}

/**
 * markupsafe.Markup: a str marked as HTML-safe, what escape/e/forceescape/safe return (and
 * tojson | safe in real templates). It is a str to every test and operation, but `+` and `%`
 * escape a plain string operand, its string methods return Markup (markup.ts), and the escaped
 * test is true of it. Jinja2 prints it as its text (autoescape is off).
 */
export class Markup extends PyObject {
  constructor(readonly s: string) {
    super();
  }
}

/** A Markup's text; any other value as it is. */
export function unmark(v: unknown): unknown {
  return v instanceof Markup ? v.s : v;
}

/** Python bytes (what str.encode returns): sized, iterates its byte values, prints as b'...'. */
export class PyBytes extends PyObject {
  constructor(readonly b: Uint8Array) {
    super();
  }
  attr(name: string): unknown {
    if (name !== 'decode') return undefined;
    return new PyCallable('decode', () => {
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(this.b);
      } catch {
        return fail("'utf-8' codec can't decode bytes");
      }
    });
  }
}

/** Python `repr(bytes)`. */
export function bytesRepr(b: Uint8Array): string {
  let hasSingle = false;
  let hasDouble = false;
  for (const x of b) {
    if (x === 0x27) hasSingle = true;
    else if (x === 0x22) hasDouble = true;
  }
  const q = hasSingle && !hasDouble ? '"' : "'";
  let out = `b${q}`;
  for (const x of b) {
    if (x === q.charCodeAt(0) || x === 0x5c) out += `\\${String.fromCharCode(x)}`;
    else if (x === 9) out += '\\t';
    else if (x === 10) out += '\\n';
    else if (x === 13) out += '\\r';
    else if (x < 0x20 || x >= 0x7f) out += `\\x${x.toString(16).padStart(2, '0')}`;
    else out += String.fromCharCode(x);
  }
  return out + q;
}

/**
 * A str some of whose characters came from the caller's text (message content, tool results,
 * reasoning, tool-call arguments): only in renders that track provenance (provenance.ts, for
 * contentSpecialTokens 'text'). `spans` are [start, end) pairs of UTF-16 offsets into `s`,
 * sorted, disjoint, non-empty; there is at least one, so `s` is never empty (an operation
 * whose result has no such character returns a plain string, and truthiness is PyObject's).
 * Code that does not know this class cannot read its text: toString throws, so an operation
 * provenance.ts does not follow refuses (E_CONTENT_UNSAFE) rather than losing the marks.
 */
export class ProvStr extends PyObject {
  constructor(
    readonly s: string,
    readonly spans: readonly number[],
  ) {
    super();
  }
  override toString(): string {
    throw new ContentUnsafeError('an operation on message text that cannot keep track of which characters came from it');
  }
  attr(name: string): never {
    throw new ContentUnsafeError(`the attribute '${name}' of message text`);
  }
}

/** An operation on caller text whose provenance cannot be followed (provenance.ts). */
export class ContentUnsafeError extends Error {}

/** An error a template's evaluation raised (Python's TypeError, UndefinedError, ...). */
export class TemplateError extends Error {}
/** A limit was reached. */
export class LimitError extends Error {}

/**
 * The running render's limits, for the filters and methods that build a string or a list: they
 * are called without the Run, and must refuse a size before allocating it (V8 aborts the process
 * on some oversized arrays instead of throwing). Renders are synchronous, so Engine.renderWith
 * sets these for the length of a render and restores them after.
 */
export const bounds: { maxOutput: number; maxItems: number; tick: ((n: number) => void) | null } = {
  maxOutput: 64 * 1024 * 1024,
  maxItems: 1_000_000,
  tick: null,
};

/** A string of `n` UTF-16 code units is about to be built. */
export function boundSize(n: number): void {
  if (n > bounds.maxOutput) throw new LimitError(`a value longer than ${bounds.maxOutput} (limits.maxOutput)`);
}

/**
 * boundSize, and the work counted: building a string of n units counts n / 1024 loop
 * iterations, so that a loop repeating a big string operation (a replace over megabytes, say)
 * stops at maxIterations instead of running for hours.
 */
export function boundWork(n: number): void {
  boundSize(n);
  if (n >= 1024 && bounds.tick !== null) bounds.tick(Math.floor(n / 1024));
}

/** A list of `n` items is about to be built. */
export function boundItems(n: number): void {
  if (n > bounds.maxItems) throw new LimitError(`a list longer than ${bounds.maxItems} items (limits.maxIterations)`);
}
/** raise_exception(...) from the template. */
export class RaisedError extends Error {}

export function fail(message: string): never {
  throw new TemplateError(message);
}

export function isDict(v: unknown): v is Record<string, unknown> | Map<unknown, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyObject);
}

/** A JS number that is a Python int (see the mapping above). */
export function intNum(n: number): boolean {
  return Number.isInteger(n) && n < 1e21 && n > -1e21;
}

export function isInt(v: unknown): boolean {
  return (typeof v === 'number' && intNum(v)) || typeof v === 'bigint';
}

export function isFloat(v: unknown): boolean {
  return (typeof v === 'number' && !intNum(v)) || v instanceof PyFloat;
}

export function isNumber(v: unknown): boolean {
  return typeof v === 'number' || typeof v === 'bigint' || v instanceof PyFloat;
}

/** The JS number of an int/float/bool (bool is an int in Python). */
export function num(v: unknown): number {
  // A plain -0 is an int (a float -0.0 is a PyFloat): Python's int 0, as json.loads('-0') gives.
  if (typeof v === 'number') return v === 0 ? 0 : v;
  if (v instanceof PyFloat) return v.v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return Number(v);
  return fail(`unsupported operand type: ${typeName(v)}`);
}

/** A float result: boxed when integral so it keeps printing as a float. */
export function float(x: number): number | PyFloat {
  return intNum(x) ? new PyFloat(x) : x;
}

export function typeName(v: unknown): string {
  if (v === undefined) return 'Undefined';
  if (v === null) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (isInt(v)) return 'int';
  if (isFloat(v)) return 'float';
  if (typeof v === 'string' || v instanceof ProvStr) return 'str';
  if (v instanceof PyTuple) return 'tuple';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Namespace) return 'Namespace';
  if (v instanceof PyIter) return v.kind;
  if (v instanceof PyView) return v.kind;
  if (v instanceof Range) return 'range';
  if (v instanceof PyBytes) return 'bytes';
  if (v instanceof Markup) return 'Markup';
  if (v instanceof PyCallable || typeof v === 'function') return 'function';
  if (v instanceof PyObject) return v.constructor.name;
  return 'dict';
}

export function dictGet(d: Record<string, unknown> | Map<unknown, unknown>, k: unknown): unknown {
  if (d instanceof Map) return d.get(k);
  if (typeof k !== 'string') return typeof k === 'number' ? (Object.hasOwn(d, String(k)) ? undefined : undefined) : undefined;
  return Object.hasOwn(d, k) ? d[k] : undefined;
}

export function dictHas(d: Record<string, unknown> | Map<unknown, unknown>, k: unknown): boolean {
  if (d instanceof Map) return d.has(k);
  return typeof k === 'string' && Object.hasOwn(d, k);
}

export function dictKeys(d: Record<string, unknown> | Map<unknown, unknown>): unknown[] {
  return d instanceof Map ? [...d.keys()] : Object.keys(d);
}

export function dictEntries(d: Record<string, unknown> | Map<unknown, unknown>): Array<[unknown, unknown]> {
  return d instanceof Map ? [...d.entries()] : Object.entries(d);
}

export function dictSize(d: Record<string, unknown> | Map<unknown, unknown>): number {
  if (d instanceof Map) return d.size;
  let n = 0;
  for (const k in d) if (Object.hasOwn(d, k)) n++;
  return n;
}

export function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '' || v === 0) return false;
  if (v === true || typeof v === 'string') return true;
  if (typeof v === 'number') return !Number.isNaN(v);
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof PyFloat) return v.v !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (v instanceof PyView) return v.items.length > 0;
  if (v instanceof Range) return v.length > 0;
  if (v instanceof PyBytes) return v.b.length > 0;
  if (v instanceof Markup) return v.s !== '';
  if (v instanceof PyObject) return true;
  if (isDict(v)) return dictSize(v) > 0;
  return true;
}

/** Python `repr(float)`: shortest round trip, fixed notation for 1e-4 <= |x| < 1e16. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expStr] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mant.replace('.', '');
  const exp = Number(expStr);
  const sign = x < 0 ? '-' : '';
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    return `${sign}${intPart}.${frac || '0'}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/**
 * Python's str(int) in decimal: more than 4300 digits is a ValueError
 * (sys.int_info.default_max_str_digits, Python 3.11+; the conversion is quadratic). The hex
 * length bounds the digit count first, so a huge value is refused without converting it.
 */
/**
 * Python's str ordering, by code point: JS's `<` compares UTF-16 units, which puts an astral
 * character (a surrogate pair, 0xD800...) before U+E000..U+FFFF.
 */
export function strCompare(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length < b.length ? -1 : 1;
  // The character that differs starts one unit back when the common unit before is a high surrogate.
  const h = i > 0 ? a.charCodeAt(i - 1) : 0;
  if (h >= 0xd800 && h < 0xdc00) i--;
  const x = a.codePointAt(i)!;
  const y = b.codePointAt(i)!;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * d[k] = v for a dict the template builds: Python's 1, 1.0 and True are one key (the first one
 * stays, with the last value), which a JS Map keeps apart.
 */
export function dictSet(m: Map<unknown, unknown>, k: unknown, v: unknown): void {
  const numeric = (x: unknown) => typeof x === 'number' || typeof x === 'boolean' || typeof x === 'bigint' || x instanceof PyFloat;
  if (!m.has(k) && numeric(k))
    for (const old of m.keys())
      if (numeric(old) && eq(old, k)) {
        m.set(old, v);
        return;
      }
  m.set(k, v);
}

export function bigStr(v: bigint): string {
  const hexLen = (v < 0n ? -v : v).toString(16).length;
  const s = hexLen > 3600 ? '' : v.toString();
  if (hexLen > 3600 || s.length - (v < 0n ? 1 : 0) > MAX_STR_DIGITS)
    fail(`Exceeds the limit (${MAX_STR_DIGITS} digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit`);
  return s;
}
export const MAX_STR_DIGITS = 4300;

export function intStr(n: number): string {
  if (Object.is(n, -0)) return '0';
  return Math.abs(n) < 1e21 ? String(n) : BigInt(n).toString();
}

const NON_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;

/** Python `repr(str)`. */
export function strRepr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const c = s.charCodeAt(i);
    if (ch === q || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x7f && c >= 0x20) out += ch;
    else {
      // Python escapes what str.isprintable() refuses: categories C* and Z* but the space.
      const cp = s.codePointAt(i)!;
      const full = String.fromCodePoint(cp);
      if (cp > 0xffff) i++;
      if (NON_PRINTABLE.test(full)) {
        const hex = cp.toString(16);
        out += cp < 0x100 ? `\\x${hex.padStart(2, '0')}` : cp < 0x10000 ? `\\u${hex.padStart(4, '0')}` : `\\U${hex.padStart(8, '0')}`;
      } else out += full;
    }
  }
  return out + q;
}

const MAX_DEPTH = 1000;

function deep(depth: number, v: unknown, stack: unknown[]): void {
  if (depth < MAX_DEPTH) return;
  if (stack.includes(v)) throw new TemplateError('cyclic data: a value contains itself');
  throw new LimitError(`data nested more than ${MAX_DEPTH} levels deep`);
}

/** Python `repr(x)`. */
export function repr(v: unknown, depth = 0, stack: unknown[] = []): string {
  if (typeof v === 'string') return strRepr(v);
  if (v instanceof Markup) return `Markup(${strRepr(v.s)})`;
  if (v === undefined) return 'Undefined';
  if (Array.isArray(v) || isDict(v)) {
    deep(depth, v, stack);
    if (stack.includes(v)) return Array.isArray(v) ? '[...]' : '{...}';
    stack.push(v);
    let s: string;
    if (Array.isArray(v)) {
      const parts = v.map((x) => repr(x, depth + 1, stack));
      s = v instanceof PyTuple ? (parts.length === 1 ? `(${parts[0]},)` : `(${parts.join(', ')})`) : `[${parts.join(', ')}]`;
    } else {
      s = `{${dictEntries(v)
        .map(([k, x]) => `${repr(k, depth + 1, stack)}: ${repr(x, depth + 1, stack)}`)
        .join(', ')}}`;
    }
    stack.pop();
    return s;
  }
  return str(v);
}

/** Python `str(x)` (Jinja2 prints values with it; Undefined prints empty). */
export function str(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return intNum(v) ? intStr(v) : floatRepr(v);
  if (v === undefined) return '';
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v instanceof PyFloat) return floatRepr(v.v);
  if (typeof v === 'bigint') return bigStr(v);
  if (v instanceof TextMap) return v.text;
  if (v instanceof Markup) return v.s;
  if (Array.isArray(v) || isDict(v)) return repr(v);
  if (v instanceof Namespace) {
    nsHook.whole?.(v);
    const attrs = new Map<unknown, unknown>(v.attrs);
    return `<Namespace ${repr(attrs)}>`;
  }
  if (v instanceof PyCallable) return v.toString();
  if (typeof v === 'function') return `<function ${(v as { name: string }).name}>`;
  if (v instanceof PyView) return `${v.kind}(${repr([...v.items])})`;
  if (v instanceof PyIter) return `<${v.kind} object>`;
  if (v instanceof PyBytes) return bytesRepr(v.b);
  if (v instanceof Range) return v.step === 1 ? `range(${v.start}, ${v.stop})` : `range(${v.start}, ${v.stop}, ${v.step})`;
  return String(v);
}

/** Python `==`. */
export function eq(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return typeof a !== 'number' || !Number.isNaN(a);
  // A str subclass (Markup, or ProvStr in provenance renders) equals a str of the same text
  // (checked only where one is involved: off the hot path).
  if (typeof a === 'string' || typeof b === 'string') {
    const x = a instanceof Markup || a instanceof ProvStr ? a.s : a;
    const y = b instanceof Markup || b instanceof ProvStr ? b.s : b;
    return typeof x === 'string' && x === y;
  }
  if (a instanceof Markup || a instanceof ProvStr) return (b instanceof Markup || b instanceof ProvStr) && a.s === b.s;
  if (b instanceof Markup || b instanceof ProvStr) return false;
  if (a === undefined || b === undefined) return false;
  if (a === null || b === null) return false;
  const an = typeof a === 'number' || typeof a === 'boolean' || typeof a === 'bigint' || a instanceof PyFloat;
  const bn = typeof b === 'number' || typeof b === 'boolean' || typeof b === 'bigint' || b instanceof PyFloat;
  if (an || bn) {
    if (!(an && bn)) return false;
    if (typeof a === 'bigint' || typeof b === 'bigint') {
      // Exact, as Python compares an int with a float.
      const exact = (x: unknown): bigint | null => {
        if (typeof x === 'bigint') return x;
        const n = num(x);
        return Number.isInteger(n) ? BigInt(n) : null;
      };
      const x = exact(a);
      const y = exact(b);
      return x !== null && y !== null && x === y;
    }
    return num(a) === num(b);
  }
  if (depth > MAX_DEPTH) throw new LimitError(`data nested more than ${MAX_DEPTH} levels deep (or cyclic)`);
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a instanceof PyTuple !== b instanceof PyTuple || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!eq(a[i], b[i], depth + 1)) return false;
    return true;
  }
  // Key and item views are set-like: equal when they hold the same elements.
  if (a instanceof PyView && b instanceof PyView && a.kind !== 'dict_values' && b.kind !== 'dict_values')
    return a.items.length === b.items.length && a.items.every((x) => b.items.some((y) => eq(x, y, depth + 1)));
  if (a instanceof Range && b instanceof Range)
    return a.length === b.length && (a.length === 0 || (a.start === b.start && (a.length === 1 || a.step === b.step)));
  if (a instanceof PyBytes && b instanceof PyBytes) return a.b.length === b.b.length && a.b.every((x, i) => x === b.b[i]);
  if (isDict(a) && isDict(b)) {
    if (dictSize(a) !== dictSize(b)) return false;
    for (const [k, v] of dictEntries(a)) {
      if (!dictHas(b, k) || !eq(v, dictGet(b, k), depth + 1)) return false;
    }
    return true;
  }
  return false;
}

/** Python `<` etc: numbers with numbers, str with str, lists lexicographically. */
export function compare(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return strCompare(a, b);
  if (a instanceof Markup || b instanceof Markup) return compare(unmark(a), unmark(b));
  if (a instanceof ProvStr) return compare(a.s, b);
  if (b instanceof ProvStr) return compare(a, b.s);
  if (isNumber(a) || typeof a === 'boolean') {
    if (isNumber(b) || typeof b === 'boolean') {
      if (typeof a === 'bigint' || typeof b === 'bigint') {
        const x = typeof a === 'bigint' ? a : num(a);
        const y = typeof b === 'bigint' ? b : num(b);
        return x < y ? -1 : x > y ? 1 : 0;
      }
      const x = num(a);
      const y = num(b);
      return x < y ? -1 : x > y ? 1 : x === y ? 0 : NaN;
    }
  }
  if (Array.isArray(a) && Array.isArray(b) && a instanceof PyTuple === b instanceof PyTuple) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (!eq(a[i], b[i])) return compare(a[i], b[i]);
    }
    return a.length - b.length;
  }
  return fail(`'<' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

/** Python iteration: list/tuple items, dict keys, str characters; Undefined iterates empty. */
export function iterate(v: unknown): readonly unknown[] {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return Array.from(v);
  if (v === undefined) return [];
  if (v instanceof ProvStr) throw new ContentUnsafeError('iterating over the characters of message text');
  if (v instanceof Range) return v.materialize();
  if (v instanceof PyView) return v.items;
  if (v instanceof PyIter) return v.take();
  if (v instanceof PyBytes) return Array.from(v.b);
  if (v instanceof Markup) return Array.from(v.s);
  if (isDict(v)) return dictKeys(v);
  return fail(`'${typeName(v)}' object is not iterable`);
}

/** `range(...)`, lazy: its length is known without building it (so limits apply before any allocation). */
export class Range extends PyObject {
  constructor(
    readonly start: number,
    readonly stop: number,
    readonly step: number,
    readonly check: (n: number) => void,
  ) {
    super();
  }
  get length(): number {
    const { start, stop, step } = this;
    const n = step > 0 ? Math.ceil((stop - start) / step) : Math.ceil((start - stop) / -step);
    return Math.max(0, n);
  }
  at(i: number): number {
    return this.start + i * this.step;
  }
  /** range.index / count and the start/stop/step attributes. */
  attr(name: string): unknown {
    if (name === 'start' || name === 'stop' || name === 'step') return this[name];
    if (name !== 'index' && name !== 'count') return undefined;
    return new PyCallable(name, (a) => {
      const x = a[0];
      const n = this.length;
      let at = -1;
      if (typeof x === 'number' && Number.isInteger(x)) {
        const k = (x - this.start) / this.step;
        if (Number.isInteger(k) && k >= 0 && k < n) at = k;
      }
      if (name === 'count') return at < 0 ? 0 : 1;
      return at < 0 ? fail(`${repr(x)} is not in range`) : at;
    });
  }
  materialize(): number[] {
    const n = this.length;
    this.check(n);
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = this.start + i * this.step;
    return out;
  }
}

/** Python's `len()`. */
export function length(v: unknown): number {
  if (typeof v === 'string') {
    let n = 0;
    for (let i = 0; i < v.length; i++) {
      const c = v.charCodeAt(i);
      if (c < 0xd800 || c > 0xdbff || i + 1 >= v.length) n++;
      else {
        n++;
        i++;
      }
    }
    return n;
  }
  if (Array.isArray(v)) return v.length;
  if (v === undefined) return 0;
  if (v instanceof ProvStr) return length(v.s);
  if (v instanceof Range) return v.length;
  if (v instanceof PyView) return v.items.length;
  if (v instanceof PyBytes) return v.b.length;
  if (v instanceof Markup) return length(v.s);
  if (isDict(v)) return dictSize(v);
  if (v instanceof Namespace) return fail("object of type 'Namespace' has no len()");
  if (v instanceof PyIter) return fail(`object of type '${v.kind}' has no len()`);
  return fail(`object of type '${typeName(v)}' has no len()`);
}

/** Is this string made of code units only (no astral characters)? Then index == code unit. */
export function bmp(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return false;
  }
  return true;
}

export function chars(s: string): string[] {
  return Array.from(s);
}
