/**
 * A plain-data copy of the caller's messages (and tools), taken once at the entry of chat
 * rendering, so that nothing the caller built can throw or loop later inside the template:
 * a getter or a Proxy trap that throws, a cycle, or nesting deeper than any chat template
 * reads becomes E_MESSAGES_INVALID naming the path, never the caller's own raw error or
 * E_TEMPLATE "Maximum call stack size exceeded" (issue 20, item 6).
 *
 * The copy mirrors what the template engine reads (src/template/arguments.ts plainCopy): an
 * array element by element (holes stay holes), any other object by its own enumerable string
 * keys in Object.keys order, whatever its prototype; strings, numbers, booleans, null,
 * undefined and functions as they are. A bigint or a symbol, which JSON cannot carry, is
 * refused here with its path. An object reached twice without
 * a cycle (a DAG) is copied at each place, as JSON would carry it (MAX_MESSAGES_VALUES bounds
 * what a deep DAG can expand to).
 *
 * Cost: one visit per value, ~1 ms for a 645-message agent conversation (3,230 values; a
 * Map of copied objects to keep DAGs shared made it 6 ms). Strings are not copied (V8 shares
 * them), so the incremental renderer's `===` on the caller's strings still holds.
 */
import { PromptencError, describeValue } from './errors.js';

/** Deeper nesting than this is refused: real messages are ~6 deep, JSON Schemas in tools ~20. */
export const MAX_MESSAGES_DEPTH = 256;

/** More values than this in one call are refused (the copy is O(values), ~0.3 µs each). */
export const MAX_MESSAGES_VALUES = 1_000_000;

function refuse(path: string, what: string, cause?: unknown): never {
  // A path 256 levels deep is kilobytes: keep its two ends.
  if (path.length > 300) path = `${path.slice(0, 120)}…${path.slice(-160)}`;
  throw new PromptencError('E_MESSAGES_INVALID', `${path}: ${what}`, cause === undefined ? undefined : { cause });
}

function pathOf(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

/**
 * The plain-data copy of `value` (see the file comment); `name` is the path prefix of errors
 * (`messages`, `options.tools`). Throws E_MESSAGES_INVALID for a throwing getter or trap, a
 * cycle, a bigint or symbol, or a value deeper than MAX_MESSAGES_DEPTH / larger than
 * MAX_MESSAGES_VALUES.
 */
export function snapshotMessages(value: unknown, name: string): unknown {
  // The objects from the root to the value being copied: a cycle is an object among them
  // (a linear scan: depth is ~6 in real messages, at most MAX_MESSAGES_DEPTH).
  const open: object[] = [];
  let values = 0;
  // The keys from the root to the value being copied; a path string is built only on failure
  // (this runs over every message on every render of a session).
  const keys: Array<string | number> = [];
  const here = (): string => keys.reduce<string>((p, k) => pathOf(p, k), name);
  const copy = (v: unknown, depth: number): unknown => {
    if (++values > MAX_MESSAGES_VALUES) refuse(name, `more than ${MAX_MESSAGES_VALUES} values (MAX_MESSAGES_VALUES)`);
    const t = typeof v;
    if (t === 'bigint' || t === 'symbol') refuse(here(), `expected JSON data, received a ${t}`);
    if (t !== 'object' || v === null) return v;
    const obj = v as object;
    for (let i = 0; i < open.length; i++) if (open[i] === obj) refuse(here(), 'the value contains itself (a cycle)');
    if (depth >= MAX_MESSAGES_DEPTH) refuse(here(), `nested deeper than ${MAX_MESSAGES_DEPTH} levels (MAX_MESSAGES_DEPTH)`);
    open.push(obj);
    let out: unknown;
    let isArray: boolean;
    try {
      isArray = Array.isArray(obj); // throws for a revoked Proxy
    } catch (err) {
      refuse(here(), `reading it threw: ${messageOf(err)}`, err);
    }
    if (isArray) {
      const list = obj as unknown[];
      let n: number;
      let arr: unknown[];
      try {
        n = list.length;
        arr = new Array(n);
      } catch (err) {
        refuse(here(), `reading its length threw: ${messageOf(err)}`, err);
      }
      for (let i = 0; i < n; i++) {
        let has: boolean;
        let item: unknown;
        keys.push(i);
        try {
          has = i in list;
          item = has ? list[i] : undefined;
        } catch (err) {
          refuse(here(), `reading it threw: ${messageOf(err)}`, err);
        }
        if (has) arr[i] = copy(item, depth + 1);
        keys.pop();
      }
      out = arr;
    } else {
      let own: string[];
      try {
        own = Object.keys(obj);
      } catch (err) {
        refuse(here(), `listing its keys threw: ${messageOf(err)}`, err);
      }
      const rec: Record<string, unknown> = {};
      for (const k of own) {
        let item: unknown;
        keys.push(k);
        try {
          item = (obj as Record<string, unknown>)[k];
        } catch (err) {
          refuse(here(), `reading it threw: ${messageOf(err)}`, err);
        }
        const c = copy(item, depth + 1);
        keys.pop();
        // A "__proto__" key must stay an own property, as in Object.entries.
        if (k === '__proto__') Object.defineProperty(rec, k, { value: c, enumerable: true, writable: true, configurable: true });
        else rec[k] = c;
      }
      out = rec;
    }
    open.pop();
    return out;
  };
  return copy(value, 0);
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  try {
    return describeValue(err);
  } catch {
    return 'a value that cannot be shown';
  }
}
