import { jinja } from './jinja.js';

/**
 * Python `json` semantics for chat templates, where @huggingface/jinja follows JS:
 * - `json.loads` keeps `1.0` a float and `12345678901234567890` an exact int, and keeps
 *   object keys in document order (JS puts integer-like keys first);
 * - `json.dumps` prints floats with repr (`1.0`, `1e-07`, `1e+16`) and escapes strings
 *   its own way. transformers' `tojson` is `json.dumps(x, ensure_ascii=False, ...)`.
 * Tool-call arguments sent as JSON text go through `parseArguments` and every `tojson`
 * through `toPythonJson`, so prompts match what vLLM renders.
 */

type RV = { type: string; value: unknown; toString(): string };
type RVCtor = new (value: unknown) => RV;

// The runtime value classes are not exported; take them from values the library builds
// (on first use: see jinja.ts).
let runtimeClasses: Record<'Float' | 'Integer' | 'String' | 'Boolean' | 'Null' | 'Undefined' | 'Array' | 'Object', RVCtor> | undefined;
export function rt(): NonNullable<typeof runtimeClasses> {
  if (!runtimeClasses) {
    const probe = new (jinja().Environment)();
    const ctor = (name: string, v: unknown) => (probe.set(name, v) as unknown as { constructor: RVCtor }).constructor;
    runtimeClasses = {
      Float: ctor('f', 1.5),
      Integer: ctor('i', 1),
      String: ctor('s', ''),
      Boolean: ctor('b', true),
      Null: ctor('n', null),
      Undefined: ctor('u', undefined),
      Array: ctor('a', []),
      Object: ctor('o', {}),
    };
  }
  return runtimeClasses;
}

export function makeStringValue(s: string): RV {
  return new (rt().String)(s);
}

class JsonSyntaxError extends Error {}

/**
 * Parse JSON text straight into runtime values, keeping float-ness, exact big integers
 * (printed from their literal) and key order. Returns undefined on invalid JSON.
 * `wrapText` lets accounting mark the strings (see accounting.ts).
 */
export function parseArgumentsToRuntime(
  text: string,
  makeMap: (entries: Array<[string, RV]>) => Map<string, RV>,
  wrapText?: (s: string) => string,
): RV | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const fail = (): never => {
    throw new JsonSyntaxError(`at ${i}`);
  };
  const str = (): string => {
    // JSON.parse handles every escape exactly; hand it the literal.
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail();
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (top: boolean): RV => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const entries: Array<[string, RV]> = [];
      ws();
      if (text[i] === '}') {
        i++;
        return new (rt().Object)(makeMap(entries));
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        const k = str();
        ws();
        if (text[i] !== ':') fail();
        i++;
        const v = value(false);
        const key = wrapText ? wrapText(k) : k;
        // Python dicts keep the last value of a repeated key, at the first key's place.
        const at = entries.findIndex(([x]) => x === key);
        if (at >= 0) entries[at] = [key, v];
        else entries.push([key, v]);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          break;
        }
        fail();
      }
      return new (rt().Object)(top ? makeMap(entries) : new Map(entries));
    }
    if (c === '[') {
      i++;
      const items: RV[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return new (rt().Array)(items);
      }
      for (;;) {
        items.push(value(false));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          break;
        }
        fail();
      }
      return new (rt().Array)(items);
    }
    if (c === '"') {
      const s = str();
      return new (rt().String)(wrapText ? wrapText(s) : s);
    }
    const lit = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (lit) {
      i += lit[0].length;
      const n = Number(lit[0]);
      if (lit[1] !== undefined || lit[2] !== undefined) return new (rt().Float)(n);
      const rv = new (rt().Integer)(n);
      if (!Number.isSafeInteger(n)) {
        const exact = BigInt(lit[0]).toString();
        Object.defineProperty(rv, 'pyLiteral', { value: exact });
        Object.defineProperty(rv, 'toString', { value: () => exact });
      }
      return rv;
    }
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v === null ? new (rt().Null)(null) : new (rt().Boolean)(v);
      }
    }
    return fail();
  };
  try {
    const out = value(true);
    ws();
    return i === text.length ? out : undefined;
  } catch (err) {
    if (err instanceof JsonSyntaxError) return undefined;
    throw err;
  }
}

/** Python `repr(float)`: shortest round-trip digits, fixed for 1e-4 <= |x| < 1e16, else d.ddde±XX. */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
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

/** Python json's string encoder (ensure_ascii False or True). */
export function pythonJsonString(s: string, ensureAscii: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || (ensureAscii && c > 0x7e)) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

export interface PyJsonOptions {
  indent?: number | null;
  separators?: [string, string] | null;
  sortKeys?: boolean;
  ensureAscii?: boolean;
}

/** `json.dumps(value, ...)` over runtime values. */
export function toPythonJson(v: RV, opts: PyJsonOptions, depth = 0): string {
  const indent = opts.indent ?? null;
  const [itemSep, keySep] = opts.separators ?? (indent !== null ? [',', ': '] : [', ', ': ']);
  switch (v.type) {
    case 'NullValue':
    case 'UndefinedValue':
      return 'null';
    case 'BooleanValue':
      return v.value ? 'true' : 'false';
    case 'IntegerValue':
      return (v as unknown as { pyLiteral?: string }).pyLiteral ?? String(v.value);
    case 'FloatValue':
      return pythonFloatRepr(v.value as number);
    case 'StringValue':
      return pythonJsonString(v.value as string, opts.ensureAscii ?? false);
    case 'ArrayValue':
    case 'TupleValue':
    case 'ObjectValue':
    case 'NamespaceValue': {
      const pad = indent !== null ? `\n${' '.repeat(indent * (depth + 1))}` : '';
      const close = indent !== null ? `\n${' '.repeat(indent * depth)}` : '';
      let parts: string[];
      let open: string;
      let end: string;
      if (v.type === 'ArrayValue' || v.type === 'TupleValue') {
        parts = (v.value as RV[]).map((x) => toPythonJson(x, opts, depth + 1));
        [open, end] = ['[', ']'];
      } else {
        let entries = [...(v.value as Map<string, RV>).entries()];
        if (opts.sortKeys) entries = entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        parts = entries.map(([k, x]) => `${pythonJsonString(k, opts.ensureAscii ?? false)}${keySep}${toPythonJson(x, opts, depth + 1)}`);
        [open, end] = ['{', '}'];
      }
      if (parts.length === 0) return `${open}${end}`;
      return `${open}${pad}${parts.join(`${itemSep}${pad}`)}${close}${end}`;
    }
    default:
      throw new Error(`Object of type ${v.type} is not JSON serializable`);
  }
}
