import { PromptencError } from '../../errors.js';
import type { Stmt } from './ast.js';
import { compileBody, type CStmt, type CompileState } from './compile.js';
import { extraGlobals } from './globals-extra.js';
import { SyntaxErr } from './lexer.js';
import { type EngineMemo, memoLoops } from './memo.js';
import { parse } from './parser.js';
import { DEFAULT_LIMITS, Run, Scope, type TemplateLimits } from './runtime.js';
import { ProvRun } from './provenance.js';
import {
  bounds,
  ContentUnsafeError,
  ProvStr,
  dictEntries,
  dictSet,
  fail,
  isDict,
  LimitError,
  Namespace,
  num,
  PyCallable,
  RaisedError,
  Range,
  TemplateError,
} from './values.js';

export type { TemplateLimits } from './runtime.js';
export { DEFAULT_LIMITS } from './runtime.js';
export { EngineMemo } from './memo.js';

/**
 * promptenc's Jinja2 engine for chat templates: Python Jinja2's semantics as transformers
 * configures it (ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True), the
 * loopcontrols extension, `{% generation %}`, tojson = json.dumps(ensure_ascii=False),
 * raise_exception, strftime_now), parsed once and compiled to closures, incremental over the
 * loop over `messages` (memo.ts), and bounded (TemplateLimits).
 *
 * What renderChat and sessions render with: render.ts (ChatTemplate) builds transformers'
 * context and converts the messages; sessions pass an EngineMemo.
 *
 * Context values are plain JS data, mapped to Python values as values.ts says: an integer
 * number is an int, any other number a float (a float with an integral value, Python's `1.0`,
 * cannot be told from an int in plain JS data: it prints as `1`; tool-call arguments sent as
 * JSON text keep it, see render.ts); objects are dicts in Object.keys order; undefined is
 * Jinja2's Undefined.
 */
export interface CompiledTemplate {
  render(context: Record<string, unknown>): string;
}

export interface CompileOptions {
  limits?: TemplateLimits;
  /**
   * Compile for renderProvenance (provenance.ts): the render also tells which output
   * characters came from caller text. Such an Engine renders only that way.
   */
  provenance?: boolean;
}

/** A render with provenance: `spans` are the [start, end) UTF-16 offsets of caller text in `text`. */
export interface ProvenanceResult {
  text: string;
  spans: number[];
}

/** What ChatTemplate (render.ts) passes for one render. */
export interface RenderOptions {
  /** Clock for strftime_now. */
  now?: () => Date;
  /** An incremental render: the session's memo. */
  memo?: EngineMemo;
}

export interface RenderResult {
  text: string;
  /** The top-level output as pieces (incremental renders only). */
  pieces: string[] | undefined;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Python's strftime in the C locale, for the directives chat templates use. */
export function strftime(date: Date, format: string): string {
  return format.replace(/%[YmdbBaAHMSjyIpe%]/g, (t) => {
    switch (t) {
      case '%Y':
        return String(date.getFullYear());
      case '%y':
        return pad2(date.getFullYear() % 100);
      case '%m':
        return pad2(date.getMonth() + 1);
      case '%d':
        return pad2(date.getDate());
      case '%e':
        return String(date.getDate()).padStart(2, ' ');
      case '%b':
        return MONTHS[date.getMonth()]!.slice(0, 3);
      case '%B':
        return MONTHS[date.getMonth()]!;
      case '%a':
        return DAYS[date.getDay()]!.slice(0, 3);
      case '%A':
        return DAYS[date.getDay()]!;
      case '%H':
        return pad2(date.getHours());
      case '%I':
        return pad2(date.getHours() % 12 || 12);
      case '%p':
        return date.getHours() < 12 ? 'AM' : 'PM';
      case '%M':
        return pad2(date.getMinutes());
      case '%S':
        return pad2(date.getSeconds());
      case '%j': {
        const start = new Date(date.getFullYear(), 0, 1);
        return String(Math.floor((date.getTime() - start.getTime()) / 86_400_000) + 1).padStart(3, '0');
      }
      default:
        return '%';
    }
  });
}

const MAX_RANGE = 100_000;

function globals(r: Run, now: () => Date): Map<string, unknown> {
  const g = new Map<string, unknown>();
  g.set(
    'range',
    new PyCallable(
      'range',
      (a) => {
        const ints = a.map((x) =>
          typeof x === 'boolean' ? (x ? 1 : 0) : Number.isInteger(x) ? (x as number) : fail(`'${typeof x}' object cannot be interpreted as an integer`),
        );
        const [start, stop, step] = ints.length === 1 ? [0, ints[0]!, 1] : [ints[0]!, ints[1]!, ints[2] ?? 1];
        if (step === 0) fail('range() arg 3 must not be zero');
        const range = new Range(start, stop, step, (n) => r.tick(n));
        // jinja2/sandbox.py safe_range: MAX_RANGE = 100000, OverflowError past it.
        if (range.length > MAX_RANGE) fail(`Range too big. The sandbox blocks ranges larger than MAX_RANGE (${MAX_RANGE}).`);
        return range;
      },
      'global:range',
    ),
  );
  g.set(
    'namespace',
    new PyCallable(
      'namespace',
      (a, k) => {
        const ns = new Namespace(r.line, r.namespaces++);
        r.nsList.push(ns);
        for (const x of a) if (isDict(x)) for (const [key, v] of dictEntries(x)) ns.attrs.set(String(key), v);
        if (k) for (const [key, v] of k) ns.attrs.set(key, v);
        return ns;
      },
      'global:namespace',
    ),
  );
  g.set(
    'raise_exception',
    new PyCallable(
      'raise_exception',
      (a) => {
        // Caller text in the message is not output: its plain text (a provenance render).
        throw new RaisedError(String(a[0] instanceof ProvStr ? a[0].s : (a[0] ?? '')));
      },
      'global:raise_exception',
    ),
  );
  g.set(
    'strftime_now',
    new PyCallable('strftime_now', (a) => {
      r.rec?.taint();
      return strftime(now(), String(a[0]));
    }),
  );
  g.set(
    'dict',
    new PyCallable(
      'dict',
      (a, k) => {
        const m = new Map<unknown, unknown>();
        for (const x of a) if (isDict(x)) for (const [key, v] of dictEntries(x)) dictSet(m, key, v);
        if (k) for (const [key, v] of k) m.set(key, v);
        return m;
      },
      'global:dict',
    ),
  );
  for (const [k, v] of extraGlobals(r)) g.set(k, v);
  return g;
}

function resolveLimits(l: TemplateLimits | undefined): Required<TemplateLimits> {
  const out = { ...DEFAULT_LIMITS };
  for (const k of ['maxOutput', 'maxIterations', 'maxDepth'] as const) {
    const v = l?.[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !(v >= 0)) throw new PromptencError('E_ARGUMENT', `limits.${k}: expected a non-negative number, received ${String(v)}`);
    out[k] = v;
  }
  return out;
}

function lineOf(source: string, line: number): string {
  const text = source.replace(/\r\n|\r/g, '\n').split('\n')[line - 1];
  return text === undefined ? '' : `: ${text.trim().slice(0, 120)}`;
}

/** A template compiled once, rendered many times (each render has its own state: reentrant). */
export class Engine implements CompiledTemplate {
  private readonly body: CStmt;
  private readonly limits: Required<TemplateLimits>;
  /** Some loop is a top-level loop over `messages` (an incremental render can reuse it). */
  readonly incremental: boolean;
  private readonly provenance: boolean;

  constructor(
    readonly source: string,
    options: CompileOptions = {},
  ) {
    this.limits = resolveLimits(options.limits);
    let ast: Stmt[];
    this.provenance = options.provenance === true;
    const cs: CompileState = { nested: 0, soft: false, memo: memoLoops, ids: 0, prov: this.provenance };
    try {
      ast = parse(source, this.limits.maxDepth);
      this.body = compileBody(ast, cs);
    } catch (err) {
      throw this.wrap(err, err instanceof SyntaxErr ? err.line : 0, 'does not parse');
    }
    this.incremental = cs.ids > 0;
  }

  render(context: Record<string, unknown>): string {
    return this.renderWith(context, {}).text;
  }

  /**
   * Render with provenance (an Engine compiled with `provenance: true`): caller text in
   * `context` is given as provenance.ts content() values; an operation on it that cannot keep
   * track of its characters throws E_CONTENT_UNSAFE.
   */
  renderProvenance(context: Record<string, unknown>, opts: Pick<RenderOptions, 'now'> = {}): ProvenanceResult {
    if (!this.provenance) throw new PromptencError('E_ARGUMENT', 'renderProvenance: the template was not compiled with provenance: true');
    const r = new ProvRun(this.limits);
    const text = this.run(r, context, opts).text;
    return { text, spans: r.spans! };
  }

  renderWith(context: Record<string, unknown>, opts: RenderOptions): RenderResult {
    if (this.provenance) throw new PromptencError('E_ARGUMENT', 'render: a template compiled with provenance: true renders with renderProvenance');
    return this.run(new Run(this.limits), context, opts);
  }

  private run(r: Run, context: Record<string, unknown>, opts: RenderOptions): RenderResult {
    const root = new Scope(null, 0);
    for (const [k, v] of globals(r, opts.now ?? (() => new Date()))) root.vars.set(k, v);
    for (const k of Object.keys(context)) root.vars.set(k, context[k]);
    const top = new Scope(root, 1);
    const memo = opts.memo;
    if (memo !== undefined) {
      if (memo.owner !== this) {
        memo.reset();
        memo.owner = this;
      }
      r.memo = memo;
      r.pieces = [];
      const m = context.messages;
      r.messagesList = Array.isArray(m) ? m : null;
    }
    const saved = { ...bounds };
    bounds.maxOutput = this.limits.maxOutput;
    bounds.maxItems = this.limits.maxIterations;
    bounds.tick = (n) => r.tick(n);
    try {
      this.body(r, top);
    } catch (err) {
      memo?.reset();
      throw this.wrap(err, r.line, 'failed');
    } finally {
      Object.assign(bounds, saved);
    }
    if (r.pieces === null) return { text: r.out, pieces: undefined };
    r.pieces.push(r.out);
    let text = '';
    for (const p of r.pieces) text += p;
    return { text, pieces: r.pieces };
  }

  private wrap(err: unknown, line: number, what: string): PromptencError {
    if (err instanceof PromptencError) return err;
    const at = line > 0 ? ` (template line ${line}${lineOf(this.source, line)})` : '';
    const opts = line > 0 ? { cause: err, templateLine: line } : { cause: err };
    if (err instanceof ContentUnsafeError)
      return new PromptencError('E_CONTENT_UNSAFE', `chat template ${what} with contentSpecialTokens 'text': ${err.message}${at}`, opts);
    // raise_exception's message is the template's own, kept as it is (callers show it); its line is in templateLine.
    if (err instanceof RaisedError) return new PromptencError('E_TEMPLATE', `chat template raised: ${err.message}`, opts);
    if (err instanceof LimitError) return new PromptencError('E_TEMPLATE_LIMIT', `chat template ${what}: ${err.message}${at}`, opts);
    if (err instanceof RangeError && /call stack/i.test(err.message))
      return new PromptencError('E_TEMPLATE_LIMIT', `chat template ${what}: recursion too deep${at}`, opts);
    // A string or array past V8's own maximum, built somewhere no explicit bound caught it.
    if (err instanceof RangeError && /invalid (string|array|typed array) length/i.test(err.message))
      return new PromptencError('E_TEMPLATE_LIMIT', `chat template ${what}: a value too large (${err.message})${at}`, opts);
    if (err instanceof TemplateError) return new PromptencError('E_TEMPLATE', `chat template ${what}: ${err.message}${at}`, opts);
    return new PromptencError('E_TEMPLATE', `chat template ${what}: ${(err as Error)?.message ?? String(err)}${at}`, opts);
  }
}

/**
 * Compile a Jinja2 chat template. `render(context)` renders it with `context` as the template's
 * variables (plain JS data); errors are PromptencError E_TEMPLATE (syntax or runtime, with the
 * template line) or E_TEMPLATE_LIMIT (see TemplateLimits for the defaults).
 */
export function compileTemplate(source: string, options?: CompileOptions): CompiledTemplate {
  return new Engine(source, options);
}

export { num };
