import { cmp, type Recorder, type Run, type Scope } from './runtime.js';
import type { LoopState, MemoLoops } from './loop.js';
import { BREAK } from './compile.js';
import { getitem } from './methods.js';
import { isDict, length, Namespace, nsHook, PyCallable, PyFloat, PyTuple, TextMap, dictEntries } from './values.js';

/**
 * Incremental rendering, built into the engine's loop over `messages`.
 *
 * A top-level `{% for message in messages %}` (not inside another loop or a macro, no `if`
 * filter, not recursive) is rendered iteration by iteration against the previous render's
 * records. Jinja2 starts every iteration from the enclosing scope (a `set` in the body does not
 * survive it), and the immutable sandbox leaves namespaces as the only mutable values, so what
 * an iteration prints and does is a function of what it reads:
 *  - its message (the same value object when the caller's message is unchanged: render.ts
 *    keeps one converted value per message);
 *  - variables of the enclosing scopes (frozen while the loop runs: the body cannot assign them);
 *  - `loop.*` attributes, items and the length of `messages`;
 *  - keys of namespaces created before the iteration, or, for `ns.key <op> other`, the answer
 *    (Qwen3's "is this turn after the last user query" moves with every user turn; the answer
 *    changes only for the last turns).
 * While an iteration is evaluated every such read is recorded; a later render reuses the
 * iteration (its output string object, and its namespace writes replayed) when its message is
 * the same object and each recorded read gives the same value now. Anything else the iteration
 * touches that this cannot compare (a caller's JS function, `messages` as a whole, the clock,
 * `loop.changed`) marks it not reusable. The text is therefore always the full render's text;
 * reuse only saves work. A change to message k invalidates iteration k and whatever read what
 * it changed, as their recorded reads stop matching.
 *
 * The top-level output is kept as pieces (text before the loop, one per iteration, the rest), so
 * the prefix the new text shares with the previous one is found from the pieces (a reused piece
 * is the same string object) without comparing the whole text.
 */
interface IterRec {
  item: unknown;
  out: string;
  broke: boolean;
  tainted: boolean;
  outer: OuterRead[];
  nsReads: Array<[number, string, unknown]>;
  preds: Array<[number, string, string, boolean, unknown, boolean]>;
  writes: Array<[number, string, unknown]>;
  loopReads: Array<[string, unknown]>;
  msgItems: Array<[unknown, unknown]>;
  msgLength: number;
  /** What the iteration counted toward maxIterations (its inner loops too): charged again on reuse. */
  ticks: number;
}

/**
 * A read of an enclosing scope's variable. Iterations recorded in one render share these
 * objects (one per name and value), and each carries its answer for the current render
 * (`epoch`, `same`), so checking a recorded read is usually two field loads.
 */
interface OuterRead {
  readonly name: string;
  readonly value: unknown;
  epoch: number;
  same: boolean;
}

/** Numbers the loop runs, so an OuterRead's cached answer belongs to one run. */
let runEpoch = 0;

/** What one render leaves for the next (a session holds one). */
export class EngineMemo {
  owner: unknown;
  loops = new Map<number, IterRec[]>();
  pieces: string[] | undefined;
  /** Per message index: the caller's message snapshot and its converted value (render.ts). */
  messages: unknown[] = [];
  /** The arguments rule `messages` was converted under (render.ts). */
  argumentsAsGiven = false;
  rendering = false;
  reused = 0;
  evaluated = 0;
  reset(): void {
    this.loops = new Map();
    this.pieces = undefined;
    this.messages = [];
    this.owner = undefined;
  }
}

/** Structural sameness across renders: no operation a template has tells the two apart. */
export function sameValue(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (depth > 64 || a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (a instanceof PyFloat) return b instanceof PyFloat && Object.is(a.v, b.v);
  if (a instanceof Namespace) return b instanceof Namespace && a.born === b.born && a.site === b.site;
  if (a instanceof PyCallable) return b instanceof PyCallable && a.tag !== undefined && a.tag === b.tag;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length || a instanceof PyTuple !== b instanceof PyTuple) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i], depth + 1)) return false;
    return true;
  }
  if (isDict(a) && isDict(b)) {
    if (a instanceof Map !== b instanceof Map || (a instanceof TextMap ? !(b instanceof TextMap) || a.text !== b.text : b instanceof TextMap)) return false;
    const x = dictEntries(a);
    const y = dictEntries(b);
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (x[i]![0] !== y[i]![0] || !sameValue(x[i]![1], y[i]![1], depth + 1)) return false;
    return true;
  }
  return false;
}

/** Data that means the same in any render: scalars, and lists and dicts of them. */
function plainData(v: unknown, depth: number): boolean {
  if (v === null || typeof v !== 'object') return typeof v !== 'function';
  if (v instanceof PyFloat) return true;
  if (depth > 64) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!plainData(v[i], depth + 1)) return false;
    return true;
  }
  if (isDict(v)) {
    for (const [, x] of dictEntries(v)) if (!plainData(x, depth + 1)) return false;
    return true;
  }
  return false;
}

class IterRecorder implements Recorder {
  /** Namespace keys this iteration wrote (`born\0key`), allocated on the first write. */
  written: Set<string> | null = null;
  born = 0;
  nsStart = 0;
  rec: IterRec = newRec(undefined);
  constructor(readonly messages: unknown) {}
  /** Start recording iteration `rec` (one recorder serves a loop's evaluated iterations). */
  start(born: number, nsStart: number, rec: IterRec): void {
    this.born = born;
    this.nsStart = nsStart;
    this.rec = rec;
    this.written = null;
  }
  /** The OuterRead objects of this loop run, by name (the latest value). */
  private readonly shared = new Map<string, OuterRead>();
  outer(name: string, v: unknown): void {
    if (v === this.messages && name === 'messages') return;
    const rec = this.rec;
    const o = rec.outer;
    for (let i = 0; i < o.length; i++) if (o[i]!.name === name) return;
    if (typeof v === 'function') rec.tainted = true;
    let e = this.shared.get(name);
    if (e === undefined || e.value !== v) {
      // Read in this render: the same as now by construction.
      e = { name, value: v, epoch: runEpoch, same: true };
      this.shared.set(name, e);
    }
    if (o === NONE) rec.outer = [e];
    else o.push(e);
  }
  wrote(ns: Namespace, key: string): boolean {
    return this.written?.has(`${ns.born}\u0000${key}`) === true;
  }
  nsRead(ns: Namespace, key: string, v: unknown, before = false): void {
    if (!before && this.written?.has(`${ns.born}\u0000${key}`)) return;
    const rec = this.rec;
    if (rec.nsReads === NONE) rec.nsReads = [];
    rec.nsReads.push([ns.born, key, v]);
  }
  nsWrite(ns: Namespace, key: string, v: unknown): void {
    const rec = this.rec;
    // A value that belongs to this render (the loop object, a namespace, a macro or caller with
    // its scope) cannot be replayed into another render: such an iteration is not reusable.
    if (!plainData(v, 0)) rec.tainted = true;
    (this.written ??= new Set()).add(`${ns.born}\u0000${key}`);
    if (rec.writes === NONE) rec.writes = [];
    rec.writes.push([ns.born, key, v]);
  }
  predicate(ns: Namespace, key: string, op: string, nsLeft: boolean, other: unknown, result: boolean, before = false): boolean {
    if (!before && this.written?.has(`${ns.born}\u0000${key}`)) return true;
    if (other !== null && typeof other === 'object' && !(other instanceof PyFloat)) return false;
    const rec = this.rec;
    if (rec.preds === NONE) rec.preds = [];
    rec.preds.push([ns.born, key, op, nsLeft, other, result]);
    return true;
  }
  loopRead(name: string, v: unknown): void {
    const rec = this.rec;
    if (name === 'changed') {
      rec.tainted = true;
      return;
    }
    for (const x of rec.loopReads) if (x[0] === name) return;
    if (rec.loopReads === NONE) rec.loopReads = [];
    rec.loopReads.push([name, v]);
  }
  msgItem(key: unknown, v: unknown): void {
    const rec = this.rec;
    if (rec.msgItems === NONE) rec.msgItems = [];
    rec.msgItems.push([key, v]);
  }
  taint(): void {
    this.rec.tainted = true;
  }
}

function outerValue(s: Scope, name: string): unknown {
  for (let sc: Scope | null = s; sc !== null; sc = sc.parent) {
    const v = sc.vars.get(name);
    if (v !== undefined || sc.vars.has(name)) return v;
  }
  return undefined;
}

/** Does the recorded iteration read the same values in this render? (Runs per iteration per render: index loops, no allocation.) */
function reusable(rec: IterRec, r: Run, s: Scope, items: readonly unknown[], i: number, state: LoopState, cache: Map<string, [unknown, boolean]>): boolean {
  // The same message value (the message cache keeps one per unchanged message), or an equal one
  // (messages given without the cache, or moved): values are never mutated, == is structural.
  if (rec.tainted || (rec.item !== items[i] && !sameValue(rec.item, items[i]))) return false;
  if (rec.msgLength >= 0 && rec.msgLength !== items.length) return false;
  const outer = rec.outer;
  for (let k = 0; k < outer.length; k++) {
    const e = outer[k]!;
    if (e.epoch !== runEpoch) {
      const c = cache.get(e.name);
      if (c !== undefined && c[0] === e.value) e.same = c[1];
      else {
        e.same = sameValue(outerValue(s, e.name), e.value);
        cache.set(e.name, [e.value, e.same]);
      }
      e.epoch = runEpoch;
    }
    if (!e.same) return false;
  }
  const nsl = r.nsList;
  const reads = rec.nsReads;
  for (let k = 0; k < reads.length; k++) {
    const e = reads[k]!;
    const ns = nsl[e[0]];
    if (ns === undefined) return false;
    const v = ns.attrs.get(e[1]);
    if (v !== e[2] && !sameValue(v, e[2])) return false;
  }
  const preds = rec.preds;
  for (let k = 0; k < preds.length; k++) {
    const [born, key, op, left, other, result] = preds[k]!;
    const ns = nsl[born];
    if (ns === undefined) return false;
    const v = ns.attrs.get(key);
    try {
      if ((left ? cmp(op, v, other) : cmp(op, other, v)) !== result) return false;
    } catch {
      return false;
    }
  }
  const lr = rec.loopReads;
  for (let k = 0; k < lr.length; k++) {
    const e = lr[k]!;
    const v = state.valueAt(e[0], i);
    if (v !== e[1] && !sameValue(v, e[1])) return false;
  }
  const mi = rec.msgItems;
  for (let k = 0; k < mi.length; k++) {
    const e = mi[k]!;
    const v = getitem(items, e[0]);
    if (v !== e[1] && !sameValue(v, e[1])) return false;
  }
  return true;
}

/** The string as one flat string: ToNumber flattens a V8 rope in place (its value is unused). */
function flatten(s: string): string {
  Number(s);
  return s;
}

/** Shared by records that read nothing of a kind (most read little): replaced on the first push. */
const NONE: never[] = [];

function newRec(item: unknown): IterRec {
  return {
    item,
    out: '',
    broke: false,
    tainted: false,
    outer: NONE,
    nsReads: NONE,
    preds: NONE,
    writes: NONE,
    loopReads: NONE,
    msgItems: NONE,
    msgLength: -1,
    ticks: 1,
  };
}

export const memoLoops: MemoLoops = {
  run(id, r, s, items, state, one) {
    const memo = r.memo;
    if (memo === null || r.messagesList !== items) return undefined;
    const pieces = r.pieces!;
    pieces.push(r.out);
    r.flushed += r.out.length;
    r.out = '';
    const old = memo.loops.get(id) ?? [];
    const next: IterRec[] = new Array(items.length);
    const cache = new Map<string, [unknown, boolean]>();
    runEpoch++;
    // One recorder and one set of hooks for the loop's evaluated iterations.
    const recorder = new IterRecorder(items);
    const onLoopRead = (name: string, v: unknown) => recorder.loopRead(name, v);
    const onNsRead = (ns: Namespace, key: string, v: unknown) => {
      if (ns.born < recorder.nsStart) recorder.nsRead(ns, key, v);
    };
    const onNsWhole = (ns: Namespace) => {
      if (ns.born < recorder.nsStart) recorder.rec.tainted = true;
    };
    for (let i = 0; i < items.length; i++) {
      const prev = old[i];
      if (prev !== undefined && reusable(prev, r, s, items, i, state, cache)) {
        // A reused iteration counts what evaluating it counted: a session fails where a full render would.
        r.tick(prev.ticks);
        memo.reused++;
        state.index0 = i;
        pieces.push(prev.out);
        r.flushed += prev.out.length;
        if (r.flushed > r.maxOutput) r.write('');
        const w = prev.writes;
        for (let k = 0; k < w.length; k++) r.nsList[w[k]![0]]!.attrs.set(w[k]![1], w[k]![2]);
        next[i] = prev;
        if (prev.broke) {
          next.length = i + 1;
          break;
        }
        continue;
      }
      memo.evaluated++;
      const rec = newRec(items[i]);
      recorder.start(r.scopes, r.namespaces, rec);
      const saved = r.rec;
      r.rec = recorder;
      state.onRead = onLoopRead;
      const savedRead = nsHook.read;
      const savedWhole = nsHook.whole;
      nsHook.read = onNsRead;
      nsHook.whole = onNsWhole;
      let flow: number;
      const ticks0 = r.iterations;
      try {
        flow = one(i);
        rec.ticks = r.iterations - ticks0;
      } finally {
        r.rec = saved;
        state.onRead = null;
        nsHook.read = savedRead;
        nsHook.whole = savedWhole;
      }
      // Kept for later renders: flattened, so the record holds one string instead of the rope
      // of small pieces the iteration wrote (which the next scavenge would copy cell by cell).
      rec.out = flatten(r.out);
      pieces.push(r.out);
      r.flushed += r.out.length;
      r.out = '';
      rec.broke = flow === BREAK;
      next[i] = rec;
      if (rec.broke) {
        next.length = i + 1;
        break;
      }
    }
    memo.loops.set(id, next);
    return true;
  },
  messagesRead(r, v) {
    if (r.rec !== null && v === r.messagesList && r.messagesList !== null) r.rec.taint();
    return v;
  },
  messagesItem(r, list, key, v) {
    if (r.rec !== null && list === r.messagesList && r.messagesList !== null) {
      (r.rec as IterRecorder).msgItem(key, v);
    }
    return v;
  },
  messagesLength(r, list) {
    if (r.rec !== null && list === r.messagesList && r.messagesList !== null) {
      const rec = (r.rec as IterRecorder).rec;
      if (rec) rec.msgLength = (list as unknown[]).length;
    }
    return length(list);
  },
};
