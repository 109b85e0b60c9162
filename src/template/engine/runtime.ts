import { contains, FILTERS, percentFormat, TESTS, type FilterHost, type Kw } from './filters.js';
import type { Namespace } from './values.js';
import type { EngineMemo } from './memo.js';
import { markupBinop } from './markup.js';
import {
  compare,
  eq,
  fail,
  float,
  isDict,
  isFloat,
  isInt,
  LimitError,
  Markup,
  num,
  PyCallable,
  PyFloat,
  PyObject,
  PyTuple,
  str,
  TextMap,
  typeName,
  unmark,
} from './values.js';

export interface TemplateLimits {
  /** Longest output (and longest string or list a template may build), in UTF-16 code units. Default 64 Mi. */
  maxOutput?: number;
  /**
   * Loop iterations (summed over every loop of a render, range() and list() included; an integer
   * result over 1024 bits counts one per 64 bits, and none may exceed MAX_INT_BITS). Also the
   * longest list a filter may build. A filter or method that builds a string counts one per
   * 1024 characters of it (and replace one per 16 replacements). Default 1 M.
   */
  maxIterations?: number;
  /** Macro call depth, and nesting depth of the template's syntax. Default 200. */
  maxDepth?: number;
}

export const DEFAULT_LIMITS: Required<TemplateLimits> = { maxOutput: 64 * 1024 * 1024, maxIterations: 1_000_000, maxDepth: 200 };

/** A variable scope; `born` orders scopes by creation (incremental renders tell inner from outer by it). */
export class Scope {
  readonly vars = new Map<string, unknown>();
  constructor(
    readonly parent: Scope | null,
    readonly born: number,
  ) {}
}

/** What an iteration of an incrementally rendered loop reads and writes (memo.ts). */
export interface Recorder {
  /** Scopes born before this one are outside the iteration. */
  readonly born: number;
  /** Namespaces numbered below this were created outside the iteration. */
  readonly nsStart: number;
  outer(name: string, v: unknown): void;
  /** `before`: the key was read before this iteration wrote it (it may have written it since). */
  nsRead(ns: Namespace, key: string, v: unknown, before?: boolean): void;
  /** The iteration has written ns.key. */
  wrote(ns: Namespace, key: string): boolean;
  nsWrite(ns: Namespace, key: string, v: unknown): void;
  /** `ns.key <op> other` (ns outside): recorded as its answer. false: record a plain read instead. */
  predicate(ns: Namespace, key: string, op: string, nsLeft: boolean, other: unknown, result: boolean, before?: boolean): boolean;
  taint(): void;
}

/** One render's state. */
export class Run implements FilterHost {
  out = '';
  /** Output of the top-level buffer already moved to `pieces` (incremental renders). */
  pieces: string[] | null = null;
  flushed = 0;
  /** > 0 while a set block, macro or filter block captures output. */
  capture = 0;
  line = 0;
  iterations = 0;
  depth = 0;
  scopes = 2;
  namespaces = 0;
  rec: Recorder | null = null;
  /** Provenance renders only (provenance.ts ProvRun): the output's [start, end) offsets of caller text. */
  spans: number[] | null = null;
  /** Incremental renders: the session's memo, and the context's messages list (the loops it applies to). */
  memo: EngineMemo | null = null;
  messagesList: unknown[] | null = null;
  /** Namespaces by creation order (Namespace.born). */
  readonly nsList: Namespace[] = [];
  readonly maxOutput: number;
  readonly maxIterations: number;
  readonly maxDepth: number;
  /** `call` bound once per render: method calls pass it on without allocating a closure each. */
  readonly callFn = (fn: unknown, args: unknown[], kwargs: Kw): unknown => this.call(fn, args, kwargs);

  constructor(limits: Required<TemplateLimits>) {
    this.maxOutput = limits.maxOutput;
    this.maxIterations = limits.maxIterations;
    this.maxDepth = limits.maxDepth;
  }

  write(s: string): void {
    this.out += s;
    if (this.out.length + this.flushed > this.maxOutput) throw new LimitError(`template output longer than ${this.maxOutput} characters (limits.maxOutput)`);
  }

  tick(n = 1): void {
    if ((this.iterations += n) > this.maxIterations) throw new LimitError(`more than ${this.maxIterations} loop iterations (limits.maxIterations)`);
  }

  /** A list the template builds: at most maxIterations items. */
  checkItems(n: number): void {
    if (n > this.maxIterations) throw new LimitError(`a list longer than ${this.maxIterations} items (limits.maxIterations)`);
  }

  impure(): void {
    this.rec?.taint();
  }

  checkSize(n: number): void {
    if (n > this.maxOutput) throw new LimitError(`a value longer than ${this.maxOutput} (limits.maxOutput)`);
  }

  scope(parent: Scope): Scope {
    return new Scope(parent, this.scopes++);
  }

  filter(name: string, value: unknown, args: unknown[], kwargs: Kw): unknown {
    const f = Object.hasOwn(FILTERS, name) ? FILTERS[name] : undefined;
    if (f === undefined) return fail(`No filter named '${name}'.`);
    return f(this, value, args, kwargs);
  }

  test(name: string, value: unknown, args: unknown[], _kwargs: Kw): boolean {
    const t = Object.hasOwn(TESTS, name) ? TESTS[name] : undefined;
    if (t === undefined) return fail(`No test named '${name}'.`);
    return t(this, value, args);
  }

  call(fn: unknown, args: unknown[], kwargs: Kw): unknown {
    if (fn instanceof PyCallable) return fn.fn(args, kwargs);
    if (fn instanceof PyObject && (fn as { recurse?: unknown }).recurse) {
      if (++this.depth > this.maxDepth) throw new LimitError(`recursive loop nested more than ${this.maxDepth} deep (limits.maxDepth)`);
      try {
        return (fn as unknown as { recurse: (x: unknown) => unknown }).recurse(args[0]);
      } finally {
        this.depth--;
      }
    }
    if (typeof fn === 'function') {
      this.rec?.taint();
      return (fn as (...a: unknown[]) => unknown)(...args, ...(kwargs?.size ? [Object.fromEntries(kwargs)] : []));
    }
    if (fn === undefined) return fail('undefined value is not callable');
    return fail(`'${typeName(fn)}' object is not callable`);
  }
}

function big(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  return BigInt(num(v));
}

/**
 * Python ints have no size limit, but a big-integer result costs time to build and more to
 * print: `7 ** (3 * 10**7)` took half a minute. A result over MAX_INT_BITS bits (about 19,700
 * decimal digits; Python refuses to print over 4300) is refused with E_TEMPLATE_LIMIT, and one
 * over 1024 bits counts a loop iteration per 64 bits, so that a loop of big multiplications is
 * bounded by maxIterations too.
 */
export const MAX_INT_BITS = 65_536;

function bitLength(x: bigint): number {
  return x === 0n ? 0 : (x < 0n ? -x : x).toString(16).length * 4;
}

function intBits(r: Run, bits: number): void {
  if (bits > MAX_INT_BITS) throw new LimitError(`an integer of more than ${MAX_INT_BITS} bits`);
  if (bits > 1024) r.tick(Math.ceil(bits / 64));
}

function bigPow(r: Run, x: bigint, y: bigint): bigint {
  const ax = x < 0n ? -x : x;
  if (ax <= 1n || y === 0n) return x ** y;
  // log2|x| * y, the result's size, before computing it.
  const lx = ax <= 2n ** 53n ? Math.log2(Number(ax)) : bitLength(ax) - 4;
  intBits(r, lx * Number(y));
  return x ** y;
}

function intOrFloat(a: unknown, b: unknown, x: number): unknown {
  return isFloat(a) || isFloat(b) ? float(x) : Number.isSafeInteger(x) || !Number.isFinite(x) ? x : x;
}

function isNumLike(v: unknown): boolean {
  return typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v instanceof PyFloat;
}

/** Python's binary operators (`~` is Jinja2's string concatenation). */
export function binop(r: Run, op: string, a: unknown, b: unknown): unknown {
  if (op === '~') {
    const s = str(a) + str(b);
    if (s.length > r.maxOutput) r.checkSize(s.length);
    return s;
  }
  // str % Undefined: Undefined has __getitem__, so Python takes it as a mapping the format may ignore.
  if (op === '%' && typeof a === 'string') return percentFormat(a, b);
  if (op === '%' && a instanceof Markup) return markupBinop(op, a, b, percentFormat);
  if (a === undefined || b === undefined) return fail(`unsupported operand: undefined value in '${op}'`);
  const an = isNumLike(a);
  const bn = isNumLike(b);
  if (an && bn) {
    const ints = !isFloat(a) && !isFloat(b);
    // Python ints are exact: past 2**53 the arithmetic is done on bigints.
    const unsafe =
      ints && (op === '+' || op === '-' || op === '*') && !Number.isSafeInteger(op === '+' ? num(a) + num(b) : op === '-' ? num(a) - num(b) : num(a) * num(b));
    if ((typeof a === 'bigint' || typeof b === 'bigint' || unsafe) && ints && op !== '/') {
      const x = big(a);
      const y = big(b);
      let z: bigint;
      switch (op) {
        case '+':
          z = x + y;
          break;
        case '-':
          z = x - y;
          break;
        case '*':
          intBits(r, bitLength(x) + bitLength(y));
          z = x * y;
          break;
        case '//':
          if (y === 0n) fail('integer division or modulo by zero');
          z = x / y - (x % y !== 0n && x < 0n !== y < 0n ? 1n : 0n);
          break;
        case '%':
          if (y === 0n) fail('integer division or modulo by zero');
          z = ((x % y) + y) % y;
          break;
        case '**':
          if (y < 0n) return float(Number(x) ** Number(y));
          z = bigPow(r, x, y);
          break;
        default:
          return fail(`bad operator ${op}`);
      }
      const n = Number(z);
      return Number.isSafeInteger(n) ? n : z;
    }
    const x = num(a);
    const y = num(b);
    switch (op) {
      case '+':
        return intOrFloat(a, b, x + y);
      case '-':
        return intOrFloat(a, b, x - y);
      case '*':
        return intOrFloat(a, b, x * y);
      case '/':
        if (y === 0) fail('division by zero');
        return float(x / y);
      case '//':
        if (y === 0) fail('integer division or modulo by zero');
        return intOrFloat(a, b, Math.floor(x / y));
      case '%': {
        if (y === 0) fail('integer division or modulo by zero');
        const m = x % y;
        // Python's float %: a zero result takes the divisor's sign (-0.0 % 3 is 0.0).
        return intOrFloat(a, b, m === 0 ? (y < 0 ? -0 : 0) : m < 0 !== y < 0 ? m + y : m);
      }
      case '**': {
        if (x === 0 && y < 0) fail('0.0 cannot be raised to a negative power');
        // A negative base to a fractional power is a complex number in Python.
        if (x < 0 && !Number.isInteger(y)) fail('a negative number to a fractional power has no float result');
        if (!isFloat(a) && !isFloat(b) && y < 0) return float(x ** y);
        const z = x ** y;
        if (!isFloat(a) && !isFloat(b) && !Number.isSafeInteger(z)) return bigPow(r, big(a), big(b));
        return intOrFloat(a, b, z);
      }
      default:
        return fail(`bad operator ${op}`);
    }
  }
  // Markup (never a number or Undefined) is dealt with past the numeric cases: off the hot path.
  if (a instanceof Markup || b instanceof Markup) {
    const m = markupBinop(op, a, b, percentFormat);
    if (m !== undefined) return m;
    return binop(r, op, unmark(a), unmark(b));
  }
  if (op === '+') {
    if (typeof a === 'string' && typeof b === 'string') {
      if (a.length + b.length > r.maxOutput) r.checkSize(a.length + b.length);
      return a + b;
    }
    // Tool-call arguments joined to a string (see render.ts): their JSON text.
    if (typeof b === 'string' && a instanceof TextMap) return a.text + b;
    if (typeof a === 'string' && b instanceof TextMap) return a + b.text;
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a instanceof PyTuple !== b instanceof PyTuple) fail(`can only concatenate ${typeName(a)} (not "${typeName(b)}") to ${typeName(a)}`);
      r.checkItems(a.length + b.length);
      const out = a instanceof PyTuple ? new PyTuple() : [];
      for (const x of a) out.push(x);
      for (const x of b) out.push(x);
      return out;
    }
  }
  if (op === '*') {
    const [s, n] = typeof a === 'string' || Array.isArray(a) ? [a, b] : [b, a];
    if ((typeof s === 'string' || Array.isArray(s)) && (isInt(n) || typeof n === 'boolean')) {
      // A count past Py_ssize_t is an OverflowError in Python, even for an empty sequence.
      if (typeof n === 'bigint' && (n > 9223372036854775807n || n < -9223372036854775808n)) fail("cannot fit 'int' into an index-sized integer");
      const k = Math.max(0, num(n));
      if (typeof s === 'string') r.checkSize(s.length * k);
      else r.checkItems(s.length * k);
      if (typeof s === 'string') return s.length === 0 ? '' : s.repeat(k);
      const out: unknown[] = s instanceof PyTuple ? new PyTuple() : [];
      if (s.length > 0) for (let i = 0; i < k; i++) for (const x of s) out.push(x);
      return out;
    }
  }
  if (op === '%' && typeof a === 'string') return percentFormat(a, b);
  return fail(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

/** One comparison of a chain (`a < b < c` is a < b and b < c). */
export function cmp(op: string, a: unknown, b: unknown): boolean {
  switch (op) {
    case '==':
      return eq(a, b);
    case '!=':
      return !eq(a, b);
    case 'in':
      return contains(b, a);
    case 'notin':
      return !contains(b, a);
    default: {
      if (a === undefined || b === undefined) fail(`'${op}' not supported with an undefined value`);
      const c = compare(a, b);
      if (op === '<') return c < 0;
      if (op === '>') return c > 0;
      if (op === '<=') return c <= 0;
      return c >= 0;
    }
  }
}

export function neg(v: unknown): unknown {
  if (typeof v === 'bigint') return -v;
  if (v instanceof PyFloat) return new PyFloat(-v.v);
  if (typeof v === 'number') return v === 0 && Number.isInteger(v) ? 0 : -v;
  if (typeof v === 'boolean') return v ? -1 : 0;
  return fail(`bad operand type for unary -: '${typeName(v)}'`);
}

export function pos(v: unknown): unknown {
  if (isNumLike(v)) return typeof v === 'boolean' ? (v ? 1 : 0) : v;
  return fail(`bad operand type for unary +: '${typeName(v)}'`);
}

export { isDict, PyObject };
