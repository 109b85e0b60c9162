import type { Expr, Stmt, Target } from './ast.js';
import { FILTERS, TESTS, type Kw } from './filters.js';
import { callMethod, getattr, getitem, slice } from './methods.js';
import { binop, cmp, neg, pos, type Run, type Scope } from './runtime.js';
import { SyntaxErr } from './lexer.js';
import { statementLine } from './lines.js';
import { compileFor, compileMacro } from './compile-blocks.js';
import { provBinop, provCallMethod, provCapture, provCmp, provFilter, provGetitem, provSlice, provTest, provWrite } from './provenance.js';
import type { MemoLoops } from './loop.js';
import { dictEntries, dictSet, fail, isDict, iterate, Namespace, PyTuple, str, truthy, tuple } from './values.js';

/**
 * Compiles the syntax tree to closures over plain values (values.ts): an expression becomes
 * `(run, scope) => value`, a statement `(run, scope) => flow` (0 go on, 1 break, 2 continue).
 * Scoping is Jinja2's: a for loop's body starts every iteration from the enclosing scope (a set
 * inside does not survive the iteration), macros, with and set blocks have their own scope, if
 * has none; `{% set ns.key = v %}` writes a namespace.
 */
export type CExpr = (r: Run, s: Scope) => unknown;
export type CStmt = (r: Run, s: Scope) => number;

export const GO = 0;
export const BREAK = 1;
export const CONTINUE = 2;

export interface CompileState {
  /** Inside a loop or macro: loops here are not rendered incrementally. */
  nested: number;
  /** Inside an if or a conditional expression (Jinja2's soft frame): an unknown filter or test fails when called, not at compile time. */
  soft: boolean;
  memo: MemoLoops;
  ids: number;
  /** The line Jinja2 names for an error in the statement being compiled (lines.ts); 0 outside one. */
  line?: number;
  /** Compile for a provenance render (provenance.ts): what caller text flows through is routed there. */
  prov?: boolean;
}

export function lookup(r: Run, s: Scope, name: string): unknown {
  for (let sc: Scope | null = s; sc !== null; sc = sc.parent) {
    const v = sc.vars.get(name);
    if (v !== undefined || sc.vars.has(name)) {
      if (r.rec !== null && sc.born < r.rec.born) r.rec.outer(name, v);
      return v;
    }
  }
  if (r.rec !== null) r.rec.outer(name, undefined);
  return undefined;
}

function nsGet(r: Run, ns: Namespace, key: string): unknown {
  const v = ns.attrs.get(key);
  if (r.rec !== null && ns.born < r.rec.nsStart) r.rec.nsRead(ns, key, v);
  return v;
}

export function compileBody(body: Stmt[], cs: CompileState): CStmt {
  const parts = body.map((st) => compileStmt(st, cs));
  if (parts.length === 1) return parts[0]!;
  return (r, s) => {
    for (let i = 0; i < parts.length; i++) {
      const f = parts[i]!(r, s);
      if (f !== GO) return f;
    }
    return GO;
  };
}

export function assign(r: Run, s: Scope, t: Target, v: unknown): void {
  if (t.t === 'name') s.vars.set(t.name, v);
  else if (t.t === 'tuple') {
    const items = iterate(v);
    if (items.length > t.items.length) fail(`too many values to unpack (expected ${t.items.length})`);
    if (items.length < t.items.length) fail(`not enough values to unpack (expected ${t.items.length}, got ${items.length})`);
    for (let i = 0; i < t.items.length; i++) assign(r, s, t.items[i]!, items[i]);
  } else {
    const ns = lookup(r, s, t.obj);
    if (!(ns instanceof Namespace)) fail(`can only assign to a namespace's attribute ('${t.obj}' is not a namespace)`);
    ns.attrs.set(t.name, v);
    if (r.rec !== null && ns.born < r.rec.nsStart) r.rec.nsWrite(ns, t.name, v);
  }
}

export function capture(r: Run, f: () => void): string {
  if (r.spans !== null) return provCapture(r, f) as string;
  const saved = r.out;
  r.out = '';
  r.capture++;
  try {
    f();
    return r.out;
  } finally {
    r.capture--;
    r.out = saved;
  }
}

/** capture(r, () => body(r, s)) without the closure (macro calls). */
export function captureBody(r: Run, body: CStmt, s: Scope): string {
  if (r.spans !== null) return provCapture(r, () => body(r, s)) as string;
  const saved = r.out;
  r.out = '';
  r.capture++;
  try {
    body(r, s);
    return r.out;
  } finally {
    r.capture--;
    r.out = saved;
  }
}

function compileStmt(st: Stmt, cs: CompileState): CStmt {
  const outer = cs.line;
  cs.line = st.t === 'output' ? statementLine(st.e) : st.line;
  try {
    return compileStmtAt(st, cs, cs.line);
  } finally {
    cs.line = outer;
  }
}

function compileStmtAt(st: Stmt, cs: CompileState, line: number): CStmt {
  switch (st.t) {
    case 'text': {
      const v = st.v;
      return (r) => {
        r.write(v);
        return GO;
      };
    }
    case 'output': {
      const e = compileExpr(st.e, cs);
      if (cs.prov)
        return (r, s) => {
          r.line = line;
          provWrite(r, e(r, s));
          return GO;
        };
      return (r, s) => {
        r.line = line;
        const v = e(r, s);
        r.write(typeof v === 'string' ? v : str(v));
        return GO;
      };
    }
    case 'if': {
      const soft = cs.soft;
      cs.soft = true;
      const test = compileExpr(st.test, cs);
      const body = compileBody(st.body, cs);
      const els = compileBody(st.else, cs);
      cs.soft = soft;
      return (r, s) => {
        r.line = line;
        return truthy(test(r, s)) ? body(r, s) : els(r, s);
      };
    }
    case 'set': {
      const e = compileExpr(st.e, cs);
      const t = st.target;
      return (r, s) => {
        r.line = line;
        assign(r, s, t, e(r, s));
        return GO;
      };
    }
    case 'setblock': {
      const body = compileBody(st.body, cs);
      const filters = st.filters.map((f) => compileFilterOn(f as Extract<Expr, { t: 'filter' }>, cs));
      const t = st.target;
      return (r, s) => {
        r.line = line;
        let v: unknown = capture(r, () => body(r, r.scope(s)));
        for (const f of filters) v = f(r, s, v);
        assign(r, s, t, v);
        return GO;
      };
    }
    case 'filterblock': {
      const body = compileBody(st.body, cs);
      const filters = st.filters.map((f) => compileFilterOn(f as Extract<Expr, { t: 'filter' }>, cs));
      return (r, s) => {
        r.line = line;
        let v: unknown = capture(r, () => body(r, r.scope(s)));
        for (const f of filters) v = f(r, s, v);
        if (r.spans !== null) provWrite(r, v);
        else r.write(str(v));
        return GO;
      };
    }
    case 'with': {
      const values = st.values.map((v) => compileExpr(v, cs));
      const body = compileBody(st.body, cs);
      const targets = st.targets;
      return (r, s) => {
        const inner = r.scope(s);
        for (let i = 0; i < values.length; i++) assign(r, inner, targets[i]!, values[i]!(r, s));
        return body(r, inner);
      };
    }
    case 'break':
      return () => BREAK;
    case 'continue':
      return () => CONTINUE;
    case 'generation':
      return compileBody(st.body, cs);
    case 'macro': {
      const make = compileMacro(st.name, st.args, st.body, cs, `macro:${st.id}`);
      const name = st.name;
      return (r, s) => {
        s.vars.set(name, make(r, s));
        return GO;
      };
    }
    case 'callblock': {
      const makeCaller = compileMacro('caller', st.args, st.body, cs, `caller:${st.id}`);
      const call = st.call as Extract<Expr, { t: 'call' }>;
      const fn = compileExpr(call.fn, cs);
      const args = call.args.map((a) => compileExpr(a, cs));
      const kwargs = call.kwargs.map(([k, v]) => [k, compileExpr(v, cs)] as const);
      return (r, s) => {
        r.line = line;
        const kw = new Map<string, unknown>(kwargs.map(([k, v]) => [k, v(r, s)]));
        kw.set('caller', makeCaller(r, s));
        const out = r.call(
          fn(r, s),
          args.map((a) => a(r, s)),
          kw,
        );
        if (r.spans !== null) provWrite(r, out);
        else r.write(str(out));
        return GO;
      };
    }
    case 'for':
      return compileFor(st, cs);
  }
}

/**
 * The argument list of a call with no positional arguments: shared, so a zero-argument filter,
 * test or method call allocates nothing. Callees only read their argument arrays.
 */
const NO_ARGS: unknown[] = [];

/** Evaluates compiled arguments; the shared empty list when there are none. */
function argList(args: CExpr[], r: Run, s: Scope): unknown[] {
  if (args.length === 0) return NO_ARGS;
  const a = new Array<unknown>(args.length);
  for (let i = 0; i < args.length; i++) a[i] = args[i]!(r, s);
  return a;
}

/**
 * A filter or test by name: the tables are object literals, so `constructor`, `toString` and
 * the like are properties they inherit, and must not be found (`0|constructor` would be
 * Object called on the Run).
 */
export function ownEntry<T>(table: Record<string, T>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

export function kwmap(kwargs: Array<readonly [string, CExpr]>, r: Run, s: Scope): Kw {
  if (kwargs.length === 0) return null;
  const m = new Map<string, unknown>();
  for (const [k, v] of kwargs) m.set(k, v(r, s));
  return m;
}

export function compileFilterOn(f: Extract<Expr, { t: 'filter' }>, cs: CompileState): (r: Run, s: Scope, v: unknown) => unknown {
  const known = cs.prov ? provFilter(f.name) : ownEntry(FILTERS, f.name);
  if (known === undefined && !cs.soft) throw new SyntaxErr(`No filter named '${f.name}'.`, f.line);
  const name = f.name;
  const fn: NonNullable<typeof known> = known ?? (() => fail(`No filter named '${name}'.`));
  const args = f.args.map((a) => compileExpr(a, cs));
  const kwargs = f.kwargs.map(([k, v]) => [k, compileExpr(v, cs)] as const);
  const line = cs.line || f.line;
  if (args.length === 0 && kwargs.length === 0) return (r, _s, v) => fn(r, v, NO_ARGS, null);
  return (r, s, v) => {
    r.line = line;
    return fn(r, v, argList(args, r, s), kwmap(kwargs, r, s));
  };
}

export function compileExpr(e: Expr, cs: CompileState): CExpr {
  switch (e.t) {
    case 'const': {
      const v = e.v;
      return () => v;
    }
    case 'name': {
      const name = e.name;
      if (name === 'messages') return (r, s) => cs.memo.messagesRead(r, lookup(r, s, name), 'whole');
      return (r, s) => lookup(r, s, name);
    }
    case 'list': {
      const items = e.items.map((x) => compileExpr(x, cs));
      return (r, s) => items.map((x) => x(r, s));
    }
    case 'tuple': {
      const items = e.items.map((x) => compileExpr(x, cs));
      return (r, s) => tuple(items.map((x) => x(r, s)));
    }
    case 'dict': {
      const keys = e.keys.map((x) => compileExpr(x, cs));
      const values = e.values.map((x) => compileExpr(x, cs));
      return (r, s) => {
        const m = new Map<unknown, unknown>();
        for (let i = 0; i < keys.length; i++) dictSet(m, keys[i]!(r, s), values[i]!(r, s));
        return m;
      };
    }
    case 'getattr': {
      const name = e.name;
      const line = cs.line || e.line;
      if (e.obj.t === 'name' && e.obj.name === 'messages') {
        return (r, s) => getattr(cs.memo.messagesRead(r, lookup(r, s, 'messages'), 'whole'), name);
      }
      const obj = compileExpr(e.obj, cs);
      return (r, s) => {
        const o = obj(r, s);
        // The sandbox reads a namespace's '_name' attribute as an unsafe Undefined.
        if (o instanceof Namespace) return name.charCodeAt(0) === 95 ? undefined : nsGet(r, o, name);
        if (o === undefined) r.line = line;
        return getattr(o, name);
      };
    }
    case 'getitem': {
      const key = compileExpr(e.key, cs);
      if (e.obj.t === 'name' && e.obj.name === 'messages') {
        return (r, s) => {
          const k = key(r, s);
          const list = lookup(r, s, 'messages');
          return cs.memo.messagesItem(r, list, k, getitem(list, k));
        };
      }
      const obj = compileExpr(e.obj, cs);
      const item = cs.prov ? provGetitem : getitem;
      return (r, s) => {
        const o = obj(r, s);
        const k = key(r, s);
        if (o instanceof Namespace && typeof k === 'string') return k.charCodeAt(0) === 95 ? undefined : nsGet(r, o, k);
        return item(o, k);
      };
    }
    case 'slice': {
      const obj = compileExpr(e.obj, cs);
      const parts = [e.start, e.stop, e.step].map((x) => (x ? compileExpr(x, cs) : null));
      const cut = cs.prov ? provSlice : slice;
      return (r, s) => cut(obj(r, s), parts[0] ? parts[0](r, s) : null, parts[1] ? parts[1](r, s) : null, parts[2] ? parts[2](r, s) : null);
    }
    case 'call': {
      if (e.star || e.dstar) return compileSpreadCall(e, cs);
      const args = e.args.map((a) => compileExpr(a, cs));
      const kwargs = e.kwargs.map(([k, v]) => [k, compileExpr(v, cs)] as const);
      const line = cs.line || e.line;
      if (e.fn.t === 'getattr') {
        const name = e.fn.name;
        const obj = compileExpr(e.fn.obj, cs);
        return (r, s) => {
          const o = obj(r, s);
          r.line = line;
          if (o instanceof Namespace) return r.call(nsGet(r, o, name), argList(args, r, s), kwmap(kwargs, r, s));
          if (cs.prov) return provCallMethod(r, o, name, argList(args, r, s), kwmap(kwargs, r, s), r.callFn);
          return callMethod(o, name, argList(args, r, s), kwmap(kwargs, r, s), r.callFn);
        };
      }
      const fn = compileExpr(e.fn, cs);
      return (r, s) => {
        const f = fn(r, s);
        r.line = line;
        return r.call(f, argList(args, r, s), kwmap(kwargs, r, s));
      };
    }
    case 'filter': {
      const arg = e.arg ? compileExpr(e.arg, cs) : () => undefined;
      if (e.name === 'length' && e.arg?.t === 'name' && e.arg.name === 'messages' && e.args.length === 0) {
        return (r, s) => cs.memo.messagesLength(r, lookup(r, s, 'messages'));
      }
      const f = compileFilterOn(e, cs);
      const line = cs.line || e.line;
      return (r, s) => {
        const v = arg(r, s);
        r.line = line;
        return f(r, s, v);
      };
    }
    case 'test': {
      const known = ownEntry(TESTS, e.name);
      if (known === undefined && !cs.soft) throw new SyntaxErr(`No test named '${e.name}'.`, e.line);
      const tname = e.name;
      const found: NonNullable<typeof known> = known ?? (() => fail(`No test named '${tname}'.`));
      const t = cs.prov ? provTest(found) : found;
      const arg = compileExpr(e.arg, cs);
      const args = e.args.map((a) => compileExpr(a, cs));
      const negated = e.negated;
      return (r, s) => {
        const v = arg(r, s);
        const res = t(r, v, argList(args, r, s));
        return negated ? !res : res;
      };
    }
    case 'bin': {
      const left = compileExpr(e.left, cs);
      const right = compileExpr(e.right, cs);
      const op = e.op;
      const line = cs.line || e.line;
      if (cs.prov)
        return (r, s) => {
          const a = left(r, s);
          const b = right(r, s);
          r.line = line;
          return provBinop(r, op, a, b);
        };
      if (op === '~')
        return (r, s) => {
          const a = left(r, s);
          const b = right(r, s);
          return binop(r, op, a, b);
        };
      return (r, s) => {
        const a = left(r, s);
        const b = right(r, s);
        if (op === '+' && typeof a === 'string' && typeof b === 'string' && a.length + b.length < r.maxOutput) return a + b;
        r.line = line;
        return binop(r, op, a, b);
      };
    }
    case 'compare':
      return compileCompare(e, cs);
    case 'and': {
      const left = compileExpr(e.left, cs);
      const right = compileExpr(e.right, cs);
      return (r, s) => {
        const a = left(r, s);
        return truthy(a) ? right(r, s) : a;
      };
    }
    case 'or': {
      const left = compileExpr(e.left, cs);
      const right = compileExpr(e.right, cs);
      return (r, s) => {
        const a = left(r, s);
        return truthy(a) ? a : right(r, s);
      };
    }
    case 'not': {
      const a = compileExpr(e.arg, cs);
      return (r, s) => !truthy(a(r, s));
    }
    case 'neg': {
      const a = compileExpr(e.arg, cs);
      return (r, s) => neg(a(r, s));
    }
    case 'pos': {
      const a = compileExpr(e.arg, cs);
      return (r, s) => pos(a(r, s));
    }
    case 'cond': {
      const soft = cs.soft;
      cs.soft = true;
      const test = compileExpr(e.test, cs);
      const yes = compileExpr(e.yes, cs);
      const no = e.no ? compileExpr(e.no, cs) : () => undefined;
      cs.soft = soft;
      return (r, s) => (truthy(test(r, s)) ? yes(r, s) : no(r, s));
    }
  }
}

/** A call with *args or **kwargs: rare, so the general path (the callee evaluated first, as a value). */
function compileSpreadCall(e: Extract<Expr, { t: 'call' }>, cs: CompileState): CExpr {
  const fn = compileExpr(e.fn, cs);
  const args = e.args.map((a) => compileExpr(a, cs));
  const kwargs = e.kwargs.map(([k, v]) => [k, compileExpr(v, cs)] as const);
  const star = e.star ? compileExpr(e.star, cs) : null;
  const dstar = e.dstar ? compileExpr(e.dstar, cs) : null;
  const line = cs.line || e.line;
  return (r, s) => {
    const f = fn(r, s);
    const a = args.map((x) => x(r, s));
    if (star) a.push(...iterate(star(r, s)));
    const k = new Map<string, unknown>(kwargs.map(([n, v]) => [n, v(r, s)]));
    if (dstar) {
      const d = dstar(r, s);
      if (!isDict(d)) fail('argument after ** must be a mapping');
      for (const [n, v] of dictEntries(d)) k.set(String(n), v);
    }
    r.line = line;
    return r.call(f, a, k);
  };
}

/** A namespace attribute operand (`ns.key`), compiled so a comparison with it can be recorded as its answer. */
function nsOperand(e: Expr, cs: CompileState): { obj: CExpr; key: string } | null {
  if (e.t === 'getattr' && e.obj.t === 'name' && e.obj.name !== 'messages') return { obj: compileExpr(e.obj, cs), key: e.name };
  return null;
}

function compileCompare(e: Extract<Expr, { t: 'compare' }>, cs: CompileState): CExpr {
  const first = compileExpr(e.first, cs);
  const ops = e.ops.map(([op, x]) => [op, compileExpr(x, cs)] as const);
  const line = cs.line || e.line;
  if (cs.prov)
    return (r, s) => {
      let a = first(r, s);
      for (const [op, x] of ops) {
        const b = x(r, s);
        r.line = line;
        if (!provCmp(op, a, b)) return false;
        a = b;
      }
      return true;
    };
  if (ops.length === 1) {
    const [op, right] = ops[0]!;
    const nsl = nsOperand(e.first, cs);
    const nsr = nsOperand(e.ops[0]![1], cs);
    if (nsl !== null || nsr !== null) {
      // While an iteration is recorded, `ns.key <op> other` with ns from outside the iteration is
      // recorded as its answer (memo.ts); otherwise it is an ordinary comparison.
      const side = (r: Run, s: Scope, ns: { obj: CExpr; key: string } | null, other: CExpr, nsLeft: boolean): { v: boolean } | null => {
        if (ns === null) return null;
        const o = ns.obj(r, s);
        if (!(o instanceof Namespace) || o.born >= r.rec!.nsStart) return null;
        // Python's order: the left operand first. `other` may write ns.key (a macro that sets
        // it), so whether the key was this iteration's own is decided when it is read.
        let v: unknown;
        let own = false;
        if (nsLeft) {
          v = o.attrs.get(ns.key);
          own = r.rec!.wrote(o, ns.key);
        }
        const x = other(r, s);
        if (!nsLeft) {
          v = o.attrs.get(ns.key);
          own = r.rec!.wrote(o, ns.key);
        }
        r.line = line;
        const res = nsLeft ? cmp(op, v, x) : cmp(op, x, v);
        if (!own && !r.rec!.predicate(o, ns.key, op, nsLeft, x, res, true)) r.rec!.nsRead(o, ns.key, v, true);
        return { v: res };
      };
      return (r, s) => {
        if (r.rec !== null) {
          const got = side(r, s, nsl, right, true) ?? side(r, s, nsr, first, false);
          if (got !== null) return got.v;
        }
        const a = first(r, s);
        const b = right(r, s);
        r.line = line;
        return cmp(op, a, b);
      };
    }
    return (r, s) => {
      const a = first(r, s);
      const b = right(r, s);
      if (op === '==' && typeof a === 'string' && typeof b === 'string') return a === b;
      r.line = line;
      return cmp(op, a, b);
    };
  }
  return (r, s) => {
    let a = first(r, s);
    for (const [op, x] of ops) {
      const b = x(r, s);
      r.line = line;
      if (!cmp(op, a, b)) return false;
      a = b;
    }
    return true;
  };
}

export { PyTuple };
