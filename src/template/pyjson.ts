import { floatRepr } from './engine/values.js';

/**
 * Python `json` semantics that JS's JSON does not have: `json.dumps` prints floats with repr
 * (`1.0`, `1e-07`, `1e+16`) and escapes strings its own way. The engine's tojson
 * (engine/json.ts) and the output parsers' schema coercion (output/schema.ts) use these.
 */

/** json.dumps of a float: Python's repr (engine/values.ts floatRepr), but NaN and Infinity as json writes them. */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  return floatRepr(x);
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
