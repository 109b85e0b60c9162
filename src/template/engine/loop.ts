import type { Run, Scope } from './runtime.js';
import { eq, PyCallable, PyObject } from './values.js';

/** What a loop over `messages` tells incremental rendering (memo.ts implements it). */
export interface MemoLoops {
  /**
   * Render a top-level loop over `messages` reusing the previous render's iterations.
   * `one(i)` evaluates iteration i as a plain loop would (its flow result). Returns undefined
   * when this render is not incremental (the caller then loops itself).
   */
  run(id: number, r: Run, s: Scope, items: readonly unknown[], state: LoopState, one: (i: number) => number): true | undefined;
  /** `messages` read as a whole value (not just an item or its length). */
  messagesRead(r: Run, v: unknown, how: 'whole'): unknown;
  messagesItem(r: Run, list: unknown, key: unknown, v: unknown): unknown;
  messagesLength(r: Run, list: unknown): unknown;
}

/** Jinja2's LoopContext: one object per loop, advanced each iteration. */
export class LoopState extends PyObject {
  index0 = 0;
  depth = 1;
  /** A recursive loop: loop(items) renders them (compile.ts). */
  recurse: ((items: unknown) => unknown) | null = null;
  /** Set while an iteration of an incrementally rendered loop is recorded. */
  onRead: ((name: string, v: unknown) => void) | null = null;
  private lastChanged: unknown[] | undefined;
  constructor(
    readonly items: readonly unknown[],
    private readonly run: Run,
  ) {
    super();
  }

  /** The attribute's value at iteration i (memo.ts compares a reused iteration's reads with it). */
  valueAt(name: string, i: number): unknown {
    const n = this.items.length;
    switch (name) {
      case 'index':
        return i + 1;
      case 'index0':
        return i;
      case 'revindex':
        return n - i;
      case 'revindex0':
        return n - i - 1;
      case 'first':
        return i === 0;
      case 'last':
        return i === n - 1;
      case 'length':
        return n;
      case 'previtem':
        return i > 0 ? this.items[i - 1] : undefined;
      case 'nextitem':
        return i + 1 < n ? this.items[i + 1] : undefined;
      case 'depth':
        return this.depth;
      case 'depth0':
        return this.depth - 1;
      default:
        return undefined;
    }
  }

  /** Jinja2's LoopContext repr; read through attr() so that an incremental render records the reads. */
  override toString(): string {
    return `<LoopContext ${String(this.attr('index'))}/${String(this.attr('length'))}>`;
  }

  attr(name: string): unknown {
    if (name === 'cycle') {
      const i = this.index0;
      return new PyCallable('cycle', (args) => (args.length ? args[i % args.length] : undefined), 'loop.cycle');
    }
    if (name === 'changed') {
      if (this.onRead) this.onRead('changed', NaN);
      return new PyCallable('changed', (args) => {
        const same = this.lastChanged !== undefined && this.lastChanged.length === args.length && args.every((a, k) => eq(a, this.lastChanged![k]));
        this.lastChanged = args;
        return !same;
      });
    }
    const v = this.valueAt(name, this.index0);
    if (this.onRead) this.onRead(name, v);
    void this.run;
    return v;
  }
}
