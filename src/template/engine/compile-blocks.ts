import type { MacroArg, Stmt } from './ast.js';
import { assign, BREAK, capture, captureBody, type CompileState, type CStmt, compileBody, compileExpr, GO } from './compile.js';
import { LoopState } from './loop.js';
import type { Run, Scope } from './runtime.js';
import { fail, iterate, LimitError, PyCallable, Range, strRepr, truthy, tuple } from './values.js';

/**
 * The block statements compiled with their own scopes: macros (and call-block callers) and for
 * loops, including the hand-off of a top-level loop over `messages` to the incremental memo.
 */
/** A macro: prints as Jinja2's Macro object does. */
class Macro extends PyCallable {
  constructor(
    private readonly display: string,
    ...rest: ConstructorParameters<typeof PyCallable>
  ) {
    super(...rest);
  }
  override toString(): string {
    return this.display;
  }
}

export function compileMacro(name: string, params: MacroArg[], bodyStmts: Stmt[], cs: CompileState, tag: string): (r: Run, s: Scope) => PyCallable {
  cs.nested++;
  const soft = cs.soft;
  cs.soft = false;
  const body = compileBody(bodyStmts, cs);
  const defaults = params.map((p) => (p.default ? compileExpr(p.default, cs) : null));
  cs.soft = soft;
  cs.nested--;
  const names = params.map((p) => p.name);
  // Jinja2 gives a macro caller / varargs / kwargs only when its body reads them; otherwise an
  // extra argument is a TypeError (jinja2/runtime.py Macro._invoke).
  const reads = namesRead(bodyStmts);
  const takesCaller = reads.has('caller');
  const takesVarargs = reads.has('varargs');
  const takesKwargs = reads.has('kwargs');
  // A macro's behaviour is its body over its closure's variables (reads of which are recorded
  // when it runs inside an incremental loop): comparable across renders only when the closure
  // is the template's top-level scope (born 1), the same in every render.
  // jinja2.runtime.Macro.__repr__: a call block's caller has no name.
  const display = tag.startsWith('caller:') ? '<Macro anonymous>' : `<Macro ${strRepr(name)}>`;
  return (r, closure) =>
    new Macro(
      display,
      name,
      (args, kwargs) => {
        if (++r.depth > r.maxDepth) {
          r.depth--;
          throw new LimitError(`macro calls nested more than ${r.maxDepth} deep (limits.maxDepth)`);
        }
        const saved = r.line;
        try {
          const s = r.scope(closure);
          const bound = Math.min(args.length, names.length);
          for (let i = 0; i < bound; i++) s.vars.set(names[i]!, args[i]);
          if (args.length > names.length && !takesVarargs) fail(`macro '${name}' takes not more than ${names.length} argument(s)`);
          // varargs and kwargs are built only for a body that reads them (nothing else can see them).
          const kw = takesKwargs ? new Map<string, unknown>() : null;
          if (kwargs)
            for (const [k, v] of kwargs) {
              if (k === 'caller') {
                if (!takesCaller) fail(`macro '${name}' was invoked with two values for the special caller argument. This is most likely a bug.`);
                s.vars.set('caller', v);
              } else if (names.includes(k)) {
                if (names.indexOf(k) < args.length) fail(`macro '${name}' got multiple values for argument '${k}'`);
                s.vars.set(k, v);
              } else if (!takesKwargs) fail(`macro '${name}' takes no keyword argument '${k}'`);
              else kw!.set(k, v);
            }
          if (takesCaller && !s.vars.has('caller')) s.vars.set('caller', undefined);
          for (let i = args.length; i < names.length; i++) {
            if (s.vars.has(names[i]!)) continue;
            const d = defaults[i];
            s.vars.set(names[i]!, d ? d(r, s) : undefined);
          }
          if (takesVarargs) s.vars.set('varargs', tuple(args.slice(names.length)));
          if (kw !== null) s.vars.set('kwargs', kw);
          const out = captureBody(r, body, s);
          r.line = saved;
          return out;
        } finally {
          r.depth--;
        }
      },
      closure.born === 1 ? tag : undefined,
    );
}

export function compileFor(st: Extract<Stmt, { t: 'for' }>, cs: CompileState): CStmt {
  // Loops with break are rendered in full (conservative; rare in chat templates).
  const memoId =
    cs.nested === 0 && st.iter.t === 'name' && st.iter.name === 'messages' && !st.recursive && st.cond === null && !containsBreak(st.body) ? cs.ids++ : -1;
  st.id = memoId;
  const iter = compileExpr(st.iter, cs);
  cs.nested++;
  const soft = cs.soft;
  cs.soft = false;
  const body = compileBody(st.body, cs);
  const cond = st.cond ? compileExpr(st.cond, cs) : null;
  cs.soft = soft;
  cs.nested--;
  const els = compileBody(st.else, cs);
  const target = st.target;
  const line = st.line;
  const simple = target.t === 'name' ? target.name : null;
  const freshScopes = containsDefinition(st.body);
  const hasBreak = containsBreak(st.body);
  const hasElse = st.else.length > 0;
  /**
   * Returns whether some iteration ran its body to the end: Jinja2 clears its "run the else
   * block" flag at the end of the body (jinja2/compiler.py visit_For), so with every iteration
   * ending in continue or break, the else block runs although the loop iterated.
   */
  const loop = (r: Run, s: Scope, items: readonly unknown[], from: number, state: LoopState, inner: Scope): boolean => {
    let completed = false;
    for (let i = from; i < items.length; i++) {
      r.tick();
      const sc = freshScopes ? r.scope(s) : inner;
      if (!freshScopes) sc.vars.clear();
      if (simple !== null) sc.vars.set(simple, items[i]);
      else {
        // Unpacking fails on the loop's own line (the body may have moved r.line on).
        r.line = line;
        assign(r, sc, target, items[i]);
      }
      state.index0 = i;
      sc.vars.set('loop', state);
      const f = body(r, sc);
      if (f === GO) completed = true;
      else if (f === BREAK) break;
    }
    return completed;
  };
  const recursive = st.recursive;
  const exec = (r: Run, s: Scope, v: unknown, depth: number): number => {
    let items: readonly unknown[];
    if (v instanceof Range) {
      const n = v.length;
      // range() loops are ticked as they go (the limit applies before anything is built) when small bodies
      if (n > 1_000_000) {
        // Without a break every item is an iteration: past the budget, fail before looping.
        if (!hasBreak && cond === null && n > r.maxIterations - r.iterations) r.tick(n);
        items = lazyRange(v, r);
      } else items = v.materialize();
    } else items = iterate(v);
    if (cond) {
      const kept: unknown[] = [];
      const sc = r.scope(s);
      for (const x of items) {
        r.tick();
        if (simple !== null) sc.vars.set(simple, x);
        else assign(r, sc, target, x);
        if (truthy(cond(r, sc))) kept.push(x);
      }
      items = kept;
    }
    if (items.length === 0) return els(r, s);
    const state = new LoopState(items, r);
    state.depth = depth;
    // `{% for ... recursive %}`: loop(children) renders the body over them, one level deeper.
    if (recursive) state.recurse = (x) => capture(r, () => exec(r, s, x, depth + 1));
    if (memoId >= 0 && r.pieces !== null && r.capture === 0 && !hasElse) {
      const one = (i: number): number => {
        r.tick();
        const sc = r.scope(s);
        if (simple !== null) sc.vars.set(simple, items[i]);
        else assign(r, sc, target, items[i]);
        state.index0 = i;
        sc.vars.set('loop', state);
        return body(r, sc);
      };
      if (cs.memo.run(memoId, r, s, items, state, one) !== undefined) return GO;
    }
    if (!loop(r, s, items, 0, state, r.scope(s)) && hasElse) return els(r, s);
    return GO;
  };
  return (r, s) => {
    r.line = line;
    return exec(r, s, iter(r, s), 1);
  };
}

/** A huge range iterated lazily: the iteration limit stops it long before it would be allocated. */
function lazyRange(v: Range, r: Run): readonly unknown[] {
  const n = v.length;
  return new Proxy([] as unknown[], {
    get(target, p) {
      if (p === 'length') return n;
      if (typeof p === 'string' && /^\d+$/.test(p)) {
        r.tick(0);
        return v.at(Number(p));
      }
      return Reflect.get(target, p);
    },
  });
}

/** Every name an expression or statement list reads (a superset is fine: it only widens what a macro accepts). */
function namesRead(body: Stmt[]): Set<string> {
  const out = new Set<string>();
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) {
      for (const y of x) walk(y);
      return;
    }
    if (x === null || typeof x !== 'object') return;
    const n = x as { t?: string; name?: unknown };
    if (n.t === 'name' && typeof n.name === 'string') out.add(n.name);
    // A nested macro has its own caller/varargs/kwargs.
    if (n.t === 'macro') return;
    for (const v of Object.values(x)) if (typeof v === 'object') walk(v);
  };
  walk(body);
  return out;
}

function containsBreak(body: Stmt[]): boolean {
  return body.some(
    (x) =>
      x.t === 'break' ||
      (x.t !== 'for' && x.t !== 'macro' && 'body' in x && (containsBreak(x.body) || ('else' in x && Array.isArray(x.else) && containsBreak(x.else as Stmt[])))),
  );
}

function containsDefinition(body: Stmt[]): boolean {
  const walk = (ss: Stmt[]): boolean =>
    ss.some((x) => x.t === 'macro' || x.t === 'callblock' || ('body' in x && walk(x.body)) || ('else' in x && Array.isArray(x.else) && walk(x.else as Stmt[])));
  return walk(body);
}
