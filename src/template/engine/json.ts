import { pythonFloatRepr, pythonJsonString } from '../pyjson.js';
import { bigStr, boundSize, strCompare, dictEntries, fail, intNum, intStr, isDict, LimitError, Markup, PyFloat, TemplateError, typeName } from './values.js';

export interface DumpsOptions {
  indent: number | string | null;
  separators: [string, string] | null;
  sortKeys: boolean;
  ensureAscii: boolean;
}

const MAX_DEPTH = 1000;

/**
 * transformers' `tojson` filter: `json.dumps(x, ensure_ascii=False, indent=indent,
 * separators=separators, sort_keys=sort_keys)` (transformers/utils/chat_template_utils.py),
 * over the engine's values: floats print with repr (`1.0`, `1e-07`), strings with json's own
 * escaping (pyjson.ts). Dict keys that are not strings are converted as json.dumps does
 * (int/float to their text, True to "true", None to "null"). Undefined is not serialisable.
 */
export function dumps(v: unknown, o: DumpsOptions): string {
  if (typeof o.indent === 'number') boundSize(o.indent);
  const indent = o.indent === null ? null : typeof o.indent === 'number' ? ' '.repeat(Math.max(0, o.indent)) : o.indent;
  const [itemSep, keySep] = o.separators ?? (indent !== null ? [',', ': '] : [', ', ': ']);
  const stack: unknown[] = [];
  const key = (k: unknown): string => {
    if (typeof k === 'string') return k;
    if (k instanceof Markup) return k.s;
    if (typeof k === 'number') return intNum(k) ? intStr(k) : pythonFloatRepr(k);
    if (k instanceof PyFloat) return pythonFloatRepr(k.v);
    if (typeof k === 'bigint') return bigStr(k);
    if (k === true) return 'true';
    if (k === false) return 'false';
    if (k === null) return 'null';
    return fail(`keys must be str, int, float, bool or None, not ${typeName(k)}`);
  };
  const go = (x: unknown, depth: number): string => {
    if (x === null) return 'null';
    if (x === true) return 'true';
    if (x === false) return 'false';
    if (typeof x === 'string') return pythonJsonString(x, o.ensureAscii);
    if (typeof x === 'number') return intNum(x) ? intStr(x) : pythonFloatRepr(x);
    if (x instanceof PyFloat) return pythonFloatRepr(x.v);
    if (typeof x === 'bigint') return bigStr(x);
    if (x instanceof Markup) return pythonJsonString(x.s, o.ensureAscii);
    const arr = Array.isArray(x);
    if (!arr && !isDict(x)) return fail(`Object of type ${typeName(x)} is not JSON serializable`);
    if (stack.includes(x)) throw new TemplateError('cyclic data: Circular reference detected');
    if (depth >= MAX_DEPTH) throw new LimitError(`data nested more than ${MAX_DEPTH} levels deep`);
    stack.push(x);
    if (indent !== null) boundSize(indent.length * (depth + 1));
    const pad = indent !== null ? `\n${indent.repeat(depth + 1)}` : '';
    const close = indent !== null ? `\n${indent.repeat(depth)}` : '';
    let parts: string[];
    let open: string;
    let end: string;
    if (arr) {
      parts = (x as unknown[]).map((y) => go(y, depth + 1));
      open = '[';
      end = ']';
    } else {
      let entries = dictEntries(x as Record<string, unknown>).map(([k, y]) => [key(k), y] as [string, unknown]);
      if (o.sortKeys) {
        const kinds = new Set(
          dictEntries(x as Record<string, unknown>).map(([k]) => (typeof k === 'string' ? 's' : k === null || typeof k === 'boolean' ? typeof k : 'n')),
        );
        if (kinds.size > 1) fail("'<' not supported between keys of different types");
        entries = entries.sort(([a], [b]) => strCompare(a, b));
      }
      parts = entries.map(([k, y]) => `${pythonJsonString(k, o.ensureAscii)}${keySep}${go(y, depth + 1)}`);
      open = '{';
      end = '}';
    }
    stack.pop();
    if (parts.length === 0) return open + end;
    let n = close.length + 2;
    for (const p of parts) n += p.length + itemSep.length + pad.length;
    boundSize(n);
    return `${open}${pad}${parts.join(itemSep + pad)}${close}${end}`;
  };
  return go(v, 0);
}

/**
 * json.loads of tool-call argument text, keeping what Python keeps: float-ness (`1.0` stays a
 * float: a PyFloat), exact big integers (bigint), key order including integer-like keys (a Map,
 * or `makeTop` for the outermost object), the last value of a repeated key at its first place.
 * undefined when the text is not valid JSON.
 */
export function loads(text: string, makeTop?: (entries: Array<[unknown, unknown]>) => Map<unknown, unknown>, wrap?: (s: string) => string): unknown {
  let i = 0;
  const n = text.length;
  const bad = {};
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const str = (): string => {
    const start = i++;
    while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= n) throw bad;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (top: boolean, depth: number): unknown => {
    if (depth > MAX_DEPTH) throw bad;
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const m = new Map<unknown, unknown>();
      ws();
      if (text[i] === '}') i++;
      else
        for (;;) {
          ws();
          if (text[i] !== '"') throw bad;
          let k = str();
          if (wrap) k = wrap(k);
          ws();
          if (text[i++] !== ':') throw bad;
          m.set(k, value(false, depth + 1));
          ws();
          const d = text[i++];
          if (d === ',') continue;
          if (d === '}') break;
          throw bad;
        }
      return top && makeTop ? makeTop([...m.entries()]) : m;
    }
    if (c === '[') {
      i++;
      const items: unknown[] = [];
      ws();
      if (text[i] === ']') i++;
      else
        for (;;) {
          items.push(value(false, depth + 1));
          ws();
          const d = text[i++];
          if (d === ',') continue;
          if (d === ']') break;
          throw bad;
        }
      return items;
    }
    if (c === '"') {
      const s = str();
      return wrap ? wrap(s) : s;
    }
    const lit = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (lit) {
      i += lit[0].length;
      const x = Number(lit[0]);
      if (lit[1] !== undefined || lit[2] !== undefined) return intNum(x) ? new PyFloat(x) : x;
      return Number.isSafeInteger(x) ? x : BigInt(lit[0]);
    }
    for (const [w, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['-Infinity', -Infinity],
    ] as const) {
      if (text.startsWith(w, i)) {
        i += w.length;
        return v;
      }
    }
    throw bad;
  };
  try {
    const out = value(true, 0);
    ws();
    return i === n ? out : undefined;
  } catch (e) {
    if (e === bad || e instanceof SyntaxError) return undefined;
    throw e;
  }
}
