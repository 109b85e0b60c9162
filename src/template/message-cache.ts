import { plainCopy, templateMessage } from './arguments.js';
import type { EngineMemo } from './engine/index.js';

/**
 * The messages as the template sees them, for an incremental render: message i's value from
 * the previous render with this memo is reused when the caller's message i reads the same as
 * then (a plain copy is kept as the snapshot: callers may edit a message in place). The
 * engine's memo reuses an iteration when its message is the same value object (memo.ts), and
 * converting tool-call arguments is most of the work otherwise. Values are never mutated by
 * rendering (the sandbox is immutable; only namespaces change), so sharing them is safe.
 */
interface Cached {
  snap: unknown;
  value: unknown;
}

export function cachedMessages(messages: readonly unknown[], memo: EngineMemo, argumentsAsGiven: boolean): unknown[] {
  const cache = memo.messages as Cached[];
  // Values converted under the other arguments rule (normalize 'none' vs 'vllm') are not reused.
  if (memo.argumentsAsGiven !== argumentsAsGiven) {
    cache.length = 0;
    memo.argumentsAsGiven = argumentsAsGiven;
  }
  const out: unknown[] = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const c = cache[i];
    if (c !== undefined && sameSource(messages[i], c.snap)) {
      out[i] = c.value;
      continue;
    }
    const value = templateMessage(plainCopy(messages[i]) as Record<string, unknown>, i, undefined, argumentsAsGiven);
    cache[i] = { snap: snapshotSource(messages[i]), value };
    out[i] = value;
  }
  cache.length = messages.length;
  return out;
}

const NEVER_SAME = Symbol('never the same');

/** An object's own enumerable entries with a defined value, as plainCopy reads them. */
class EntriesSnapshot {
  constructor(
    readonly keys: string[],
    readonly values: unknown[],
  ) {}
}

/** A structural copy of a caller's value, mirroring plainCopy (the value the template sees). */
function snapshotSource(v: unknown): unknown {
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) if (i in v) out[i] = snapshotSource(v[i]);
    return out;
  }
  // A Map is copied as a Map (plainCopy) and never vouched for: it is converted on every render.
  if (v instanceof Map) return NEVER_SAME;
  if (v !== null && typeof v === 'object') {
    const keys: string[] = [];
    const values: unknown[] = [];
    for (const k of Object.keys(v)) {
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined) continue;
      keys.push(k);
      values.push(snapshotSource(x));
    }
    return new EntriesSnapshot(keys, values);
  }
  return v;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * v copies to the same value as the value snapshotSource copied (keys in order, undefined values
 * left out, -0 is not 0). Objects are walked with for-in and an own-property test, which visits
 * the own enumerable string keys in Object.keys order (for-in skips names shadowed by a
 * non-enumerable own property) without allocating: this runs over every message on every render.
 */
function sameSource(v: unknown, snap: unknown): boolean {
  if (snap instanceof EntriesSnapshot) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
    const { keys, values } = snap;
    let i = 0;
    for (const k in v) {
      if (!hasOwn.call(v, k)) continue;
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined) continue;
      if (i >= keys.length || k !== keys[i] || !sameSource(x, values[i])) return false;
      i++;
    }
    return i === keys.length;
  }
  if (Array.isArray(snap)) {
    if (!Array.isArray(v) || v.length !== snap.length) return false;
    // A hole copies as a hole (not as an explicit undefined).
    for (let i = 0; i < v.length; i++) if (i in v !== i in snap || !sameSource(v[i], snap[i])) return false;
    return true;
  }
  // A function may answer differently each call (and its value would be shared): never the same.
  if (typeof v === 'function' || snap === NEVER_SAME) return false;
  return Object.is(v, snap);
}

/**
 * Length of a prefix that the texts made of `oldPieces` and `pieces` share, from the pieces: a
 * walk over both lists at once, where a piece that is the same string at the same text position
 * is passed whole (a reused iteration's output is the same string object: O(1)), then character
 * by character at the first pair that differs. The lists need not line up (a loop over
 * `messages` that prints nothing still gives one piece per message, so an appended message
 * shifts the pieces of every later loop). A lower bound of the exact common prefix is all a
 * session needs, and this is exact up to the surrogate rule below.
 */
export function certifiedCommonPrefix(oldPieces: readonly string[], pieces: readonly string[]): number {
  let common = 0;
  let last = 0;
  let i = 0;
  let j = 0;
  let oi = 0;
  let nj = 0;
  for (;;) {
    while (i < oldPieces.length && oi === oldPieces[i]!.length) {
      i++;
      oi = 0;
    }
    while (j < pieces.length && nj === pieces[j]!.length) {
      j++;
      nj = 0;
    }
    if (i >= oldPieces.length || j >= pieces.length) break;
    const a = oldPieces[i]!;
    const b = pieces[j]!;
    if (oi === 0 && nj === 0 && a === b) {
      common += b.length;
      last = b.charCodeAt(b.length - 1);
      i++;
      j++;
      continue;
    }
    const lim = Math.min(a.length - oi, b.length - nj);
    let k = 0;
    while (k < lim && a.charCodeAt(oi + k) === b.charCodeAt(nj + k)) k++;
    if (k > 0) last = b.charCodeAt(nj + k - 1);
    common += k;
    oi += k;
    nj += k;
    if (k < lim) break;
  }
  // Never end between the halves of a surrogate pair; a shorter bound is still a bound.
  if (last >= 0xd800 && last <= 0xdbff) common--;
  return common;
}

/** text.slice(from) for text = pieces.join(''), without flattening the whole text. */
export function tailOfPieces(pieces: readonly string[], total: number, from: number): string {
  let k = pieces.length;
  let off = total;
  while (k > 0 && off > from) off -= pieces[--k]!.length;
  if (k === pieces.length) return '';
  let s = pieces[k]!.slice(from - off);
  for (let j = k + 1; j < pieces.length; j++) s += pieces[j]!;
  return s;
}
