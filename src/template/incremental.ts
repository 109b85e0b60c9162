import { jinja } from './jinja.js';
import { rt } from './pyjson.js';
import { commonPrefixLength } from '../offsets.js';

/**
 * Incremental rendering for sessions: a chat template re-rendered for a conversation that
 * grew by a turn reuses, per iteration of its top-level `{% for x in messages %}` loops, the
 * output of the previous render, and reports how much of the new prompt is unchanged without
 * comparing the text. Other statements are evaluated as usual.
 *
 * Why it is exact. The interpreter is deterministic: an iteration's output and its effect on
 * the state are functions of what it reads. Everything an iteration can read is one of
 *  - the loop variable (message j),
 *  - `loop.*` (recorded: which keys the body read),
 *  - `messages` (recorded: which indices, and `length`; anything else makes the iteration
 *    not reusable),
 *  - the for-scope variables left by earlier iterations (snapshotted at iteration start),
 *  - keys of the outer scope's namespaces (recorded per key, or, for `ns.key <op> x`, as the
 *    comparison's answer),
 *  - the other outer variables, which a loop body cannot reassign (a `set` inside the loop
 *    writes to the loop's own scope): compared once per loop.
 * An iteration is reused when every one of those that the previous evaluation read is equal
 * now; it then contributes the same output string object and its recorded end state (scope
 * variables and the namespace keys it wrote) is restored, so later iterations see what a full
 * evaluation would have left. Equal means structurally equal runtime values, strings by
 * content (the caller's strings are usually the same objects, so `===` is O(1)), except that
 * a message equals only the message at the same position (`==` on mappings is identity, and
 * two messages of the given list are the same object exactly when at the same position);
 * only loops over the list the render was given are reused. An iteration that reads an outer
 * list, mapping or untagged function is not reused (see evaluateIdentifier).
 * Only scalars may cross iterations through loop variables and namespace keys (isPlain): a
 * container, namespace, function or `loop` object belongs to one render, and `==` on
 * containers is identity here. Not reused, conservatively: iterations that keep or read such
 * values, or read `messages` whole; templates that call strftime_now (the clock is an input) or
 * use break/continue anywhere; loops with an else block; outer values holding a caller's
 * function or nested namespaces; and every template when the installed @huggingface/jinja
 * differs from what this relies on (incrementalRenderingSupported).
 * Tests: test/incremental-render.test.ts and the every-prefix session tests.
 */

type RV = { type: string; value: any; toString(): string };
type Env = { variables: Map<string, RV>; parent?: Env; lookupVariable(name: string): RV; setVariable(name: string, v: RV): RV };
type AstNode = { type: string; [k: string]: any };

/**
 * FunctionValues are rebuilt on every render (each is a new closure); these tags say which
 * ones behave identically: a global by name, a macro by its AST node, a caller's function
 * by the function itself.
 */
const functionTags = new WeakMap<object, unknown>();

export function tagFunction(value: unknown, tag: unknown): void {
  if (value !== null && typeof value === 'object') functionTags.set(value, tag);
}

/**
 * The loop map of a reusable loop and the maps of outer namespaces: while an iteration is
 * evaluated, records which keys it reads (`all` when it reads the map whole) and writes.
 */
class RecordingMap extends Map<string, RV> {
  reads: Set<string> | undefined;
  writes: Set<string> | undefined;
  all = false;
  peek(k: string): RV | undefined {
    return super.get(k);
  }
  /** The entries without recording a whole read. */
  raw(): Array<[string, RV]> {
    return [...super.entries()];
  }
  poke(k: string, v: RV): void {
    super.set(k, v);
  }
  override set(k: string, v: RV): this {
    this.writes?.add(k);
    return super.set(k, v);
  }
  override get(k: string): RV | undefined {
    this.reads?.add(k);
    return super.get(k);
  }
  override has(k: string): boolean {
    this.reads?.add(k);
    return super.has(k);
  }
  override get size(): number {
    this.all = true;
    return super.size;
  }
  override entries(): MapIterator<[string, RV]> {
    this.all = true;
    return super.entries();
  }
  override keys(): MapIterator<string> {
    this.all = true;
    return super.keys();
  }
  override values(): MapIterator<RV> {
    this.all = true;
    return super.values();
  }
  override forEach(cb: (v: RV, k: string, m: Map<string, RV>) => void, thisArg?: unknown): void {
    this.all = true;
    super.forEach(cb, thisArg);
  }
  override [Symbol.iterator](): MapIterator<[string, RV]> {
    this.all = true;
    return super[Symbol.iterator]();
  }
}

/** What an iteration read of one outer namespace: keys (or all) and their values at its start. */
interface NamespaceReads {
  map: number; // index into the loop's namespace maps
  keys: string[] | 'all';
  start: Map<string, RV>;
}

interface IterRecord {
  message: RV;
  /** For-scope variables (left by earlier iterations) at the start, and at the end. */
  varsIn: Array<[string, RV]>;
  varsOut: Array<[string, RV]>;
  loop: RecordingMap;
  loopReads: string[] | 'all';
  /** Indices read through `.at()` / `[i]`, and 'length'. */
  arrayReads: Array<number | 'length'>;
  arrayRef: RV[];
  nsReads: NamespaceReads[];
  /** Namespace keys the iteration wrote, with their values at its end. */
  nsWrites: Array<[number, Array<[string, RV]>]>;
  /** Comparisons with a namespace key (see evaluateBinaryExpression): what they answered. */
  nsPredicates: NamespacePredicate[];
  output: string;
}

/**
 * `ns.key <op> other` (either side), recorded as its result rather than as a read of ns.key:
 * Qwen3's and GLM's "is this turn after the last user message" reads a namespace value that
 * moves whenever a user turn is added, while the answer changes only for the last turns.
 */
interface NamespacePredicate {
  map: number;
  key: string;
  node: AstNode;
  nsOnLeft: boolean;
  other: RV;
  result: RV;
}

/** A missing namespace key reads as this (values are never mutated, so one instance serves). */
let UNDEFINED: RV;

/**
 * `left <op> right` as the library's evaluateBinaryExpression answers it, for the cases that
 * need no allocation: == and != on scalars (its `left.value == right.value`, loose, as there)
 * and ordering on two numbers. undefined: any other case, left to the library.
 */
function scalarComparison(op: string, left: RV, right: RV): boolean | undefined {
  const code = COMPARISONS.get(op);
  if (code === undefined || !isPlain(left) || !isPlain(right)) return undefined;
  if (isNumeric(left) && isNumeric(right)) return compareNumbers(code, left.value as number, right.value as number);
  // biome-ignore lint/suspicious/noDoubleEquals: the library's == on plain values is JavaScript's loose equality
  if (code === EQ) return left.value == right.value;
  // biome-ignore lint/suspicious/noDoubleEquals: as above
  if (code === NE) return left.value != right.value;
  return undefined;
}

/** The comparison operators, by code (compareNumbers; KeyEvents.predOp, where 0 is none). */
const EQ = 1;
const NE = 2;
const COMPARISONS = new Map<string, number>([
  ['==', EQ],
  ['!=', NE],
  ['<', 3],
  ['>', 4],
  ['<=', 5],
  ['>=', 6],
]);

/** `left <op> right` on two numbers, op a COMPARISONS code. */
function compareNumbers(op: number, left: number, right: number): boolean {
  switch (op) {
    case EQ:
      return left === right;
    case NE:
      return left !== right;
    case 3:
      return left < right;
    case 4:
      return left > right;
    case 5:
      return left <= right;
    default:
      return left >= right;
  }
}

function isNumeric(v: RV): boolean {
  return v.type === 'IntegerValue' || v.type === 'FloatValue';
}

/** The empty loop-scope snapshot, shared (records only read their snapshots). */
const NO_VARS = Object.freeze([]) as unknown as Array<[string, RV]>;
/** Type of the outer-snapshot entry naming a namespace by its slot (no template value has it). */
const NS_SLOT = '\u0000promptenc:namespace-slot';
/** AST node type of an operand whose value is given (never produced by the parser). */
const KNOWN = '\u0000promptenc:known';

interface LoopRecord {
  outer: Array<[string, RV]>;
  /** This render's `messages` values, in order (their positions, see Equality). */
  items: RV[];
  /** undefined: the iteration cannot be reused (see the module comment). */
  iters: Array<IterRecord | undefined>;
  /** The contents of the outer namespaces when the loop started (copies). */
  nsStart: Array<Map<string, RV>>;
  /**
   * Per iteration, what its inputs need beyond its own message and the state it starts from
   * (see reusablePrefix): the highest message index whose identity it read (loop.nextitem and
   * loop.last read i + 1, messages[j] reads j), -1 for none, Infinity when it read something
   * that moves with the list's length (loop.length, revindex, messages|length, messages[-j])
   * or has no record.
   */
  dep: number[];
  /** cumLen[i] = total length of the outputs of iterations [0, i); cumPieces[i] = non-empty outputs among them. */
  cumLen: number[];
  cumPieces: number[];
  /** The non-empty outputs in order (the pieces this loop adds). */
  pieceList: string[];
  /** The loop's whole output, and its output before the last iteration's (ropes). */
  text: string;
  textBeforeLast: string;
  /** Index in the render's pieces of the loop's first piece. */
  pieceStart: number;
  /** Namespace keys read, written or compared, by iteration (ascending), keyed by eventKey. */
  events: Map<string, KeyEvents>;
  /** Iterations that read a namespace whole. */
  readsAll: number[];
}

/** What the iterations of a loop did with one namespace key, in iteration order. */
interface KeyEvents {
  map: number;
  key: string;
  /** Iterations that read the key (other than through a recorded comparison). */
  reads: number[];
  /** Iterations that wrote it, and the value each left. */
  writes: number[];
  values: RV[];
  /** When it was first written, as iteration * WRITE_SLOTS + its place among that iteration's writes (key order, see adoptPrefix's caller). */
  firstWrite: number;
  /** Iterations that compared it (NamespacePredicate), with the comparison. */
  preds: number[];
  predRecs: NamespacePredicate[];
  /**
   * The same comparisons as plain numbers, read in one pass without touching the records
   * (GLM's loop checks ~500 per render): COMPARISONS code (0: not a comparison of two numbers
   * with a boolean answer, see predRecs), the other side's value, 1 when the key is on the left,
   * and the recorded answer (1/0).
   */
  predOp: number[];
  predOther: number[];
  predNsLeft: number[];
  predWant: number[];
}

/** More than any iteration writes (KeyEvents.firstWrite). */
const WRITE_SLOTS = 1_000_000;

function eventKey(map: number, key: string): string {
  return `${map}\u0000${key}`;
}

function keyEvents(events: Map<string, KeyEvents>, map: number, key: string): KeyEvents {
  const k = eventKey(map, key);
  let e = events.get(k);
  if (e === undefined)
    events.set(
      k,
      (e = { map, key, reads: [], writes: [], values: [], firstWrite: 0, preds: [], predRecs: [], predOp: [], predOther: [], predNsLeft: [], predWant: [] }),
    );
  return e;
}

/** Drops the entries of iterations >= k from an ascending index list (and its parallel arrays). */
function truncateAt(k: number, idx: number[], ...parallel: unknown[][]): void {
  let n = idx.length;
  while (n > 0 && idx[n - 1]! >= k) n--;
  if (n === idx.length) return;
  idx.length = n;
  for (const p of parallel) p.length = n;
}

/** dep (see LoopRecord) of iteration i's record. */
function depOf(rec: IterRecord | undefined, i: number): number {
  if (rec === undefined || rec.loopReads === 'all') return Infinity;
  let d = -1;
  for (const k of rec.loopReads) {
    switch (k) {
      case 'index':
      case 'index0':
      case 'first':
      case 'previtem': // the message at i - 1 < i
        break;
      case 'nextitem':
      case 'last': // i === n - 1 stays false in both lists while i + 1 is in the shared prefix
        d = Math.max(d, i + 1);
        break;
      default:
        return Infinity;
    }
  }
  for (const r of rec.arrayReads) {
    if (r === 'length' || r < 0) return Infinity;
    d = Math.max(d, r);
  }
  return d;
}

/** What one render leaves for the next: per-loop records and the top-level output pieces. */
export class RenderMemo {
  loops = new Map<AstNode, LoopRecord>();
  pieces: string[] | undefined;
  /** Per message index: a snapshot of the caller's message and its runtime value (render.ts). */
  messages: unknown[] = [];
  /** A render with this memo is running (see ChatTemplate.renderIncremental). */
  rendering = false;
  /** Iterations reused / evaluated by the last render (for tests and stats). */
  reused = 0;
  evaluated = 0;

  reset(): void {
    this.loops = new Map();
    this.pieces = undefined;
    this.messages = [];
  }
}

/**
 * Lists of messages known to hold only mappings (ObjectValue): the render's message cache builds
 * them from validated messages (render.ts). A value of another type is in no such list, so its
 * position is not looked up (the outer values compared once per loop include the template's
 * global functions: four scans of the whole list per loop otherwise).
 */
const mappingLists = new WeakSet<readonly RV[]>();

export function markMappingList(items: readonly RV[]): void {
  mappingLists.add(items);
}

/** Position lookups per render answered by a scan of the list before maps are built (see Equality.positionOf). */
const SCANNED = 32;

/** Structural equality of runtime values (new, old), memoized per render for immutable values. */
class Equality {
  private readonly pairs = new WeakMap<object, object>();
  /**
   * Positions of the messages in the new and the old `messages` list. `==` on mappings is
   * identity in this interpreter, and two messages are the same object exactly when they are
   * at the same position; so a message only equals the message at the same position.
   */
  private newItems: readonly RV[] | undefined;
  private oldItems: readonly RV[] | undefined;
  // A message value shared between renders compares equal by identity first, so positions are
  // looked up only for two different values: a render that adds a turn asks a handful of times
  // (nextitem of the old last iteration, the new message). The first SCANNED lookups of a render
  // scan the list (lastIndexOf: ~1 µs for 1 k messages, no allocation); after that maps are
  // built, so a render that changed many values stays O(n) (two maps per render were 16 % of
  // a steady render's allocation and 5–11 % of its time at 200 k tokens).
  private scans = 0;
  private newAt: Map<RV, number> | undefined;
  private oldAt: Map<RV, number> | undefined;

  positions(newItems: readonly RV[], oldItems: readonly RV[] | undefined): void {
    this.newItems = newItems;
    this.oldItems = oldItems;
    this.scans = 0;
    this.newAt = undefined;
    this.oldAt = undefined;
  }

  private static positionMap(items: readonly RV[]): Map<RV, number> {
    const at = new Map<RV, number>();
    for (let i = 0; i < items.length; i++) at.set(items[i]!, i);
    return at;
  }

  /** Position of v in the new (or old) list, the last one as the map keeps it; undefined when absent. */
  private positionOf(v: RV, inNew: boolean): number | undefined {
    const items = inNew ? this.newItems : this.oldItems;
    if (items === undefined || (v.type !== 'ObjectValue' && mappingLists.has(items))) return undefined;
    if (this.scans < SCANNED) {
      this.scans++;
      const i = items.lastIndexOf(v);
      return i < 0 ? undefined : i;
    }
    const map = inNew ? (this.newAt ??= Equality.positionMap(items)) : (this.oldAt ??= Equality.positionMap(items));
    return map.get(v);
  }

  eq(a: RV | undefined, b: RV | undefined, depth = 0): boolean {
    if (a === b) return true; // a message value shared between renders sits at the same position in both
    if (a === undefined || b === undefined || a.type !== b.type || depth > 64) return false;
    if (this.pairs.get(a) === b) return true;
    // Scalars compare by value in the interpreter, so a scalar message equals any equal scalar.
    if (!isPlain(a)) {
      const pa = this.positionOf(a, true);
      const pb = this.positionOf(b, false);
      if ((pa !== undefined || pb !== undefined) && pa !== pb) return false;
    }
    // Tool-call argument mappings print as the caller's JSON text (render.ts): compare that too.
    const hasOwnText = Object.hasOwn(a, 'toString') || Object.hasOwn(b, 'toString');
    if (hasOwnText && String(a.toString()) !== String(b.toString())) return false;
    let same = false;
    switch (a.type) {
      case 'StringValue':
      case 'BooleanValue':
        same = a.value === b.value;
        break;
      case 'IntegerValue':
      case 'FloatValue':
        same = Object.is(a.value, b.value); // -0 prints differently from 0 in places
        break;
      case 'NullValue':
      case 'UndefinedValue':
        same = true;
        break;
      case 'ArrayValue':
      case 'TupleValue': {
        const x = a.value as RV[];
        const y = b.value as RV[];
        same = x.length === y.length;
        for (let i = 0; same && i < x.length; i++) same = this.eq(x[i], y[i], depth + 1);
        break;
      }
      case 'ObjectValue':
      case 'KeywordArgumentsValue': {
        const x = a.value as Map<string, RV>;
        const y = b.value as Map<string, RV>;
        if (x.constructor !== y.constructor || x.size !== y.size) break;
        if ((x.toString !== Object.prototype.toString || y.toString !== Object.prototype.toString) && String(x) !== String(y)) break;
        same = true;
        const yi = y.entries();
        for (const [k, v] of x) {
          const [k2, v2] = yi.next().value as [string, RV];
          if (k !== k2 || !this.eq(v, v2, depth + 1)) {
            same = false;
            break;
          }
        }
        break;
      }
      case NS_SLOT:
        same = a.value === b.value;
        break;
      case 'FunctionValue': {
        const t = functionTags.get(a);
        same = t !== undefined && t === functionTags.get(b);
        break;
      }
      default:
        // NamespaceValue (mutable: compared through snapshots only) and anything unknown.
        same = false;
    }
    if (same) this.pairs.set(a, b);
    return same;
  }

  entries(x: Array<[string, RV]>, y: Array<[string, RV]>): boolean {
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) {
      if (x[i]![0] !== y[i]![0] || !this.eq(x[i]![1], y[i]![1])) return false;
    }
    return true;
  }
}

/**
 * Values that may cross from one iteration or render to another: immutable scalars. A
 * container or function kept in a loop variable or a namespace is an object of one render;
 * restored into the next, it would break identity (`==` on containers is identity in this
 * interpreter) or carry closures over an old scope, so such iterations are not reused.
 */
function isPlain(v: RV | undefined): boolean {
  switch (v?.type) {
    case 'StringValue':
    case 'IntegerValue':
    case 'FloatValue':
    case 'BooleanValue':
    case 'NullValue':
    case 'UndefinedValue':
      return true;
    default:
      return false;
  }
}

const LOOP_KEYS = ['index', 'index0', 'revindex', 'revindex0', 'first', 'last', 'length', 'previtem', 'nextitem'];

/**
 * Whether loop.<k> of iteration i of n equals `old` (what an earlier evaluation read),
 * without building the loop object: reused iterations are most of a long conversation.
 * Must match the map built in messagesLoop (the library's evaluateFor builds the same one).
 */
function sameLoopValue(k: string, old: RV | undefined, i: number, n: number, items: RV[], eq: Equality): boolean {
  // No closures here: this runs per loop key read, per reused iteration.
  switch (k) {
    case 'index':
      return isInteger(old, i + 1);
    case 'index0':
      return isInteger(old, i);
    case 'revindex':
      return isInteger(old, n - i);
    case 'revindex0':
      return isInteger(old, n - i - 1);
    case 'first':
      return isBoolean(old, i === 0);
    case 'last':
      return isBoolean(old, i === n - 1);
    case 'length':
      return isInteger(old, n);
    case 'previtem':
      return i > 0 ? eq.eq(items[i - 1], old) : old?.type === 'UndefinedValue';
    case 'nextitem':
      return i < n - 1 ? eq.eq(items[i + 1], old) : old?.type === 'UndefinedValue';
    default:
      return old === undefined;
  }
}

/** The same keys and the same value objects, in order. */
function sameEntries(x: Array<[string, RV]>, y: Array<[string, RV]>): boolean {
  if (x === y) return true;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i]![0] !== y[i]![0] || x[i]![1] !== y[i]![1]) return false;
  return true;
}

function isInteger(old: RV | undefined, v: number): boolean {
  return old?.type === 'IntegerValue' && old.value === v;
}

function isBoolean(old: RV | undefined, v: boolean): boolean {
  return old?.type === 'BooleanValue' && old.value === v;
}

const loopShape = new WeakMap<AstNode, boolean>();

function containsLoopControl(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(containsLoopControl);
  if (node === null || typeof node !== 'object') return false;
  const t = (node as AstNode).type;
  if (t === 'Break' || t === 'Continue') return true;
  return Object.values(node).some((v) => v !== null && typeof v === 'object' && containsLoopControl(v));
}

/** `{% for <name> in messages %}` with no else block. */
function isMessagesLoop(node: AstNode): boolean {
  let ok = loopShape.get(node);
  if (ok === undefined) {
    ok =
      node.iterable?.type === 'Identifier' &&
      node.iterable.value === 'messages' &&
      node.loopvar?.type === 'Identifier' &&
      (node.defaultBlock?.length ?? 0) === 0;
    loopShape.set(node, ok);
  }
  return ok;
}

/** break/continue anywhere (a macro may break the loop that calls it): such templates render in full. */
const programControl = new WeakMap<object, boolean>();
function usesLoopControl(program: object): boolean {
  let v = programControl.get(program);
  if (v === undefined) programControl.set(program, (v = containsLoopControl(program)));
  return v;
}

let supported: boolean | undefined;

/**
 * What the reuse rule assumes about @huggingface/jinja, checked once against the installed
 * copy: the loop object has exactly LOOP_KEYS, and lists and mappings have no mutating
 * methods (a body could then change outer values behind the snapshots). When a future
 * version breaks either, sessions render in full.
 */
export function incrementalRenderingSupported(): boolean {
  if (supported === undefined) {
    const { Template } = jinja();
    const R = rt();
    const keys = new Template('{% for m in messages %}{% for k in loop %}{{ k }},{% endfor %}{% endfor %}').render({ messages: [1] });
    const list = new R.Array([]) as unknown as { builtins: Map<string, unknown>; _builtins?: unknown };
    const listMethods = [...list.builtins.keys()];
    const cachesBuiltins = list._builtins instanceof Map; // messagesLoop clears this cache
    const mapMethods = [...(new R.Object(new Map()) as unknown as { builtins: Map<string, unknown> }).builtins.keys()];
    supported =
      keys === LOOP_KEYS.map((k) => `${k},`).join('') &&
      cachesBuiltins &&
      listMethods.every((k) => k === 'length') &&
      mapMethods.every((k) => ['get', 'items', 'keys', 'values', 'dictsort'].includes(k));
  }
  return supported;
}

type MemoInterpreter = { run(program: unknown): RV; pieces: string[]; shared: { pieces: number; length: number } };
let memoInterpreterClass: (new (env: unknown, memo: RenderMemo) => MemoInterpreter) | undefined;

function interpreterClass(): NonNullable<typeof memoInterpreterClass> {
  if (memoInterpreterClass) return memoInterpreterClass;
  const { Interpreter, Environment } = jinja();
  const R = rt();
  UNDEFINED = new R.Undefined(undefined);
  const Base = Interpreter as unknown as new (
    env: unknown,
  ) => {
    evaluate(node: unknown, env: Env): RV;
    evaluateBlock(body: unknown[], env: Env): RV;
    evaluateMacro(node: AstNode, env: Env): RV;
    evaluateBinaryExpression(node: AstNode, env: Env): RV;
    evaluateIdentifier(node: AstNode, env: Env): RV;
    global: Env;
  };
  /** An operand whose value is already known (comparisons recomputed with other values). */
  const known = (rv: RV): AstNode => ({ type: KNOWN, rv });

  class Memo extends Base {
    pieces: string[] = [];
    /**
     * pieces[0, shared.pieces) are the previous render's first pieces (the same strings), of total
     * length shared.length; `sharing` while that still holds for every piece pushed so far. Lets
     * certifiedCommonPrefix start after a loop's reused prefix instead of walking its pieces.
     */
    shared = { pieces: 0, length: 0 };
    private sharing = true;
    private readonly next = new Map<AstNode, LoopRecord>();
    private readonly equal = new Equality();
    /** While an iteration of a reusable loop is evaluated: its namespaces and predicates. */
    private recording: { nsMaps: RecordingMap[]; predicates: NamespacePredicate[]; tainted: boolean } | undefined;

    /**
     * An outer variable read by an iteration must be a scalar, a namespace (its keys are
     * recorded), a tagged function or the messages list (positions). A list or mapping from
     * anywhere else (tools, kwargs, one the template built, a part of a message) is new in every
     * render while `==`, `in`, `unique` compare such values by identity, so the identity
     * relations the iteration sees could change while every value stays structurally equal:
     * such an iteration is not reused.
     */
    override evaluateIdentifier(node: AstNode, env: Env): RV {
      const v = super.evaluateIdentifier(node, env);
      const rec = this.recording;
      if (
        rec !== undefined &&
        !rec.tainted &&
        !isPlain(v) &&
        v !== this.original &&
        v.type !== 'NamespaceValue' &&
        !(v.type === 'FunctionValue' && functionTags.has(v))
      ) {
        let e: Env | undefined = env;
        while (e !== undefined && !e.variables.has(node.value as string)) e = e.parent;
        if (e === this.global) rec.tainted = true;
      }
      return v;
    }

    override evaluate(node: unknown, env: Env): RV {
      return (node as AstNode | undefined)?.type === KNOWN ? ((node as AstNode).rv as RV) : super.evaluate(node, env);
    }

    override evaluateBinaryExpression(node: AstNode, env: Env): RV {
      const rec = this.recording;
      if (rec === undefined || !COMPARISONS.has(node.operator?.value as string)) return super.evaluateBinaryExpression(node, env);
      for (const nsOnLeft of [true, false]) {
        const side = nsOnLeft ? node.left : node.right;
        if (side?.type !== 'MemberExpression' || side.computed || side.object?.type !== 'Identifier' || side.property?.type !== 'Identifier') continue;
        const holder = env.lookupVariable(side.object.value as string);
        const map = holder.type === 'NamespaceValue' ? rec.nsMaps.indexOf(holder.value as RecordingMap) : -1;
        if (map < 0) continue;
        const key = side.property.value as string;
        // Operands in the library's order (left first: the other side may write the key). The
        // member read is the one evaluateMemberExpression does for a namespace, minus the recording.
        const other = nsOnLeft ? undefined : this.evaluate(node.left, env);
        const nsValue = rec.nsMaps[map]!.peek(key) ?? new R.Undefined(undefined);
        const rhs = nsOnLeft ? this.evaluate(node.right, env) : other!;
        const result = this.compare(node, nsOnLeft, nsValue, rhs, env);
        // Only scalars are answered from a record; anything else stays a plain read of the key.
        if (isPlain(nsValue) && isPlain(rhs)) rec.predicates.push({ map, key, node, nsOnLeft, other: rhs, result });
        else rec.nsMaps[map]!.reads?.add(key);
        return result;
      }
      return super.evaluateBinaryExpression(node, env);
    }

    private compare(node: AstNode, nsOnLeft: boolean, nsValue: RV, other: RV, env: Env): RV {
      const left = known(nsOnLeft ? nsValue : other);
      const right = known(nsOnLeft ? other : nsValue);
      return super.evaluateBinaryExpression({ ...node, left, right }, env);
    }

    /** The `messages` list the render was given; a loop over a list the template built is not reused. */
    private readonly original: RV | undefined;

    constructor(
      env: unknown,
      private readonly memo: RenderMemo,
    ) {
      super(env);
      this.original = (env as Env).variables.get('messages');
    }

    /** Top-level statements, as evaluateBlock does them, keeping each output as a piece. */
    evalProgram(program: { body: AstNode[] }, env: Env): RV {
      const control = usesLoopControl(program);
      let out = '';
      for (const st of program.body) {
        if (st.type === 'For' && !control && isMessagesLoop(st) && env.variables.get('messages') === this.original && this.original?.type === 'ArrayValue') {
          out += this.messagesLoop(st, env);
          continue;
        }
        const v = this.evaluate(st, env);
        if (v.type === 'NullValue' || v.type === 'UndefinedValue') continue;
        const s = v.toString();
        if (s.length > 0) {
          this.pieces.push(s);
          if (this.sharing && this.memo.pieces?.[this.pieces.length - 1] === s) {
            this.shared.pieces++;
            this.shared.length += s.length;
          } else {
            this.sharing = false;
          }
        }
        out += s;
      }
      this.memo.loops = this.next;
      return new R.String(out);
    }

    override evaluateMacro(node: AstNode, env: Env): RV {
      const r = super.evaluateMacro(node, env);
      // A top-level macro statement runs once per render, so its node names one function; a
      // macro defined in a loop body is a new function per iteration and stays untagged.
      if (env === this.global) tagFunction(env.variables.get(node.name.value), node);
      return r;
    }

    private messagesLoop(node: AstNode, env: Env): string {
      const messagesValue = env.variables.get('messages')!;
      const items = messagesValue.value as RV[];
      const n = items.length;
      const outer: Array<[string, RV]> = [];
      // Outer namespaces are mutable state: their maps record per-key reads and writes.
      const nsMaps: RecordingMap[] = [];
      let nested = false;
      for (const [k, v] of env.variables) {
        if (k === 'messages') continue;
        if (v.type !== 'NamespaceValue') {
          outer.push([k, v]);
          continue;
        }
        if (!(v.value instanceof RecordingMap)) v.value = new RecordingMap(v.value as Map<string, RV>);
        const map = v.value as RecordingMap;
        if (!nsMaps.includes(map)) nsMaps.push(map);
        outer.push([k, { type: NS_SLOT, value: nsMaps.indexOf(map), toString: () => '' }]); // which map this name is, not its contents
        if (map.raw().some(([, x]) => x.type === 'NamespaceValue')) nested = true;
      }
      const prev = this.memo.loops.get(node);
      this.equal.positions(items, prev?.items);
      const reuse = !nested && prev !== undefined && this.equal.entries(outer, prev.outer);
      const loopNsStart = nsMaps.map((m) => new Map(m.raw()));
      const pieceStart = this.pieces.length;
      const record: LoopRecord = {
        outer,
        items,
        iters: [],
        nsStart: loopNsStart,
        dep: [],
        cumLen: [0],
        cumPieces: [0],
        pieceList: [],
        text: '',
        textBeforeLast: '',
        pieceStart,
        events: new Map(),
        readsAll: [],
      };
      // Pieces before the loop that the previous render also had, at the same places, and the loop
      // starting where it did then: its reused prefix's pieces are then the previous ones too.
      const sharedBefore = this.sharing && this.shared.pieces === pieceStart && prev?.pieceStart === pieceStart;
      this.sharing = false;
      this.next.set(node, record);

      const scope = new Environment(env as never) as unknown as Env;
      const scopeBuiltin = scope.variables.get('namespace');
      const loopVar = node.loopvar.value as string;
      /**
       * The for-scope variables, or undefined when one holds something not comparable. Runs for
       * every iteration of every render, reused or not: forEach with one visitor allocates
       * nothing (a for-of over the map made an iterator and an entry per variable per iteration).
       */
      let vars: Array<[string, RV]> | undefined;
      // Shared by scopeVars and scopeIs below: neither runs while the other does (both are
      // called from this loop only, never from inside an evaluation).
      let comparable = true;
      /** Not a loop-scope variable of the template's: the loop object, the loop variable, the builtin. */
      const builtin = (v: RV, k: string): boolean => k === 'loop' || k === loopVar || (k === 'namespace' && v === scopeBuiltin);
      const visit = (v: RV, k: string): void => {
        if (builtin(v, k)) return;
        if (!isPlain(v)) comparable = false;
        else (vars ??= []).push([k, v]);
      };
      const scopeVars = (): Array<[string, RV]> | undefined => {
        vars = undefined;
        comparable = true;
        scope.variables.forEach(visit);
        if (!comparable) return undefined;
        return vars ?? NO_VARS; // most templates keep no loop-scope variable: no array per iteration
      };
      /**
       * Whether scopeVars() would equal `want` (Equality.entries), without building it: the check
       * of a reused iteration, so templates with loop-scope variables (GLM's) allocate nothing per
       * reused iteration either.
       */
      const eq = this.equal;
      let want: Array<[string, RV]> = NO_VARS;
      let seen = 0;
      const match = (v: RV, k: string): void => {
        if (!comparable || builtin(v, k)) return;
        const w = want[seen++];
        if (!isPlain(v) || w === undefined || w[0] !== k || !eq.eq(v, w[1])) comparable = false;
      };
      const scopeIs = (expected: Array<[string, RV]>): boolean => {
        want = expected;
        seen = 0;
        comparable = true;
        scope.variables.forEach(match);
        return comparable && seen === expected.length;
      };

      const loopObject = (i: number): RecordingMap =>
        new RecordingMap([
          ['index', new R.Integer(i + 1)],
          ['index0', new R.Integer(i)],
          ['revindex', new R.Integer(n - i)],
          ['revindex0', new R.Integer(n - i - 1)],
          ['first', new R.Boolean(i === 0)],
          ['last', new R.Boolean(i === n - 1)],
          ['length', new R.Integer(n)],
          ['previtem', i > 0 ? items[i - 1]! : new R.Undefined(undefined)],
          ['nextitem', i < n - 1 ? items[i + 1]! : new R.Undefined(undefined)],
        ]);
      let out = '';
      let lastReused = false;
      /** Appends iteration i's output and what its record read and wrote to the loop record's indexes. */
      const commit = (i: number, rec: IterRecord | undefined, output: string): void => {
        record.iters.push(rec);
        record.dep.push(depOf(rec, i));
        if (output.length > 0) record.pieceList.push(output);
        record.cumLen.push(record.cumLen[i]! + output.length);
        record.cumPieces.push(record.pieceList.length);
        if (rec === undefined) return;
        for (let r = 0; r < rec.nsReads.length; r++) {
          const { map, keys } = rec.nsReads[r]!;
          if (keys === 'all') record.readsAll.push(i);
          else for (let k = 0; k < keys.length; k++) keyEvents(record.events, map, keys[k]!).reads.push(i);
        }
        let slot = 0; // the iteration's writes per map are in write order (RecordingMap.writes is a Set)
        for (let w = 0; w < rec.nsWrites.length; w++) {
          const [map, entries] = rec.nsWrites[w]!;
          for (let e = 0; e < entries.length; e++) {
            const ev = keyEvents(record.events, map, entries[e]![0]);
            if (ev.writes.length === 0) ev.firstWrite = i * WRITE_SLOTS + slot;
            slot++;
            ev.writes.push(i);
            ev.values.push(entries[e]![1]);
          }
        }
        for (let p = 0; p < rec.nsPredicates.length; p++) {
          const pred = rec.nsPredicates[p]!;
          const ev = keyEvents(record.events, pred.map, pred.key);
          ev.preds.push(i);
          ev.predRecs.push(pred);
          const numeric = isNumeric(pred.other) && pred.result.type === 'BooleanValue' ? (COMPARISONS.get(pred.node.operator.value as string) ?? 0) : 0;
          ev.predOp.push(numeric);
          ev.predOther.push(numeric === 0 ? 0 : (pred.other.value as number));
          ev.predNsLeft.push(pred.nsOnLeft ? 1 : 0);
          ev.predWant.push(numeric !== 0 && pred.result.value === true ? 1 : 0);
        }
      };
      /**
       * The loop scope's variables right now, as a record's array, when known without reading the
       * scope: after a reused iteration they are exactly its varsOut (scopeIs held for its varsIn,
       * variables are never deleted, and varsOut lists varsIn's keys in order, then the keys the
       * body added, in the map's order), after an evaluated one what scopeVars() read at its end.
       * A record whose varsIn is that very array (recorded so, see below) needs no scopeIs: GLM's
       * loops keep variables, and comparing them was a tenth of a steady render.
       */
      let scopeNow: Array<[string, RV]> | undefined;
      let start = 0;
      /** The previous render's records of iterations start.. (those after a reused prefix: a copy, as adoptPrefix cuts prev's array). */
      let oldIters: Array<IterRecord | undefined> | undefined = reuse && prev !== undefined ? prev.iters : undefined;
      if (reuse && prev !== undefined) {
        const k = this.reusablePrefix(prev, items, nsMaps);
        if (k > 0) {
          // Iterations [0, k) give what they gave before (reusablePrefix): take their outputs and
          // records as they are, and leave the state the last of them left.
          const last = prev.iters[k - 1]!;
          oldIters = prev.iters.slice(k); // usually an item or two: a turn was appended
          this.adoptPrefix(record, prev, k);
          for (let v = 0; v < last.varsOut.length; v++) scope.setVariable(last.varsOut[v]![0], last.varsOut[v]![1]);
          // Keys in the order of their first write: one the prefix creates goes to the end of its
          // namespace's map when first written, and `{{ ns }}` prints keys in that order.
          const written: KeyEvents[] = [];
          record.events.forEach((ev) => {
            if (ev.writes.length > 0) written.push(ev);
          });
          written.sort((x, y) => x.firstWrite - y.firstWrite);
          for (const ev of written) nsMaps[ev.map]!.poke(ev.key, ev.values[ev.values.length - 1]!);
          scopeNow = last.varsOut;
          for (let p = 0; p < record.cumPieces[k]!; p++) this.pieces.push(record.pieceList[p]!);
          if (sharedBefore) {
            this.shared.pieces += record.cumPieces[k]!;
            this.shared.length += record.cumLen[k]!;
          }
          // The previous render's loop output, or the part of it before its last iteration, when
          // that is the prefix (a turn appended); else the pieces joined again (a rope, as below).
          if (k === prev.items.length) {
            out = prev.text;
            if (k === n) record.textBeforeLast = prev.textBeforeLast;
          } else if (k === prev.items.length - 1 && k < n) {
            out = prev.textBeforeLast;
          } else {
            const before = record.cumPieces[k - 1]!; // the pieces of iterations [0, k - 1)
            for (let p = 0; p < record.cumPieces[k]!; p++) {
              if (p === before) record.textBeforeLast = out;
              out += record.pieceList[p]!;
            }
            if (before === record.cumPieces[k]) record.textBeforeLast = out; // iteration k - 1 printed nothing
          }
          this.memo.reused += k;
          lastReused = true;
          start = k;
        }
      }
      for (let i = start; i < n; i++) {
        lastReused = false;
        if (i === n - 1) record.textBeforeLast = out;
        const old = oldIters?.[i - start];
        if (old && (old.varsIn === scopeNow || scopeIs(old.varsIn)) && this.sameInputs(old, items, i, nsMaps)) {
          // Indexed loops: this runs per reused iteration, also before the JIT optimizes it.
          const varsOut = old.varsOut;
          for (let v = 0; v < varsOut.length; v++) scope.setVariable(varsOut[v]![0], varsOut[v]![1]);
          const nsWrites = old.nsWrites;
          for (let w = 0; w < nsWrites.length; w++) {
            const map = nsMaps[nsWrites[w]![0]]!;
            const entries = nsWrites[w]![1];
            for (let e = 0; e < entries.length; e++) map.poke(entries[e]![0], entries[e]![1]);
          }
          scopeNow = varsOut;
          this.memo.reused++;
          lastReused = true;
          commit(i, old, old.output);
          if (old.output.length > 0) this.pieces.push(old.output);
          out += old.output;
          continue;
        }
        // Before the body runs (the checks above change no variable). The same entries as scopeNow
        // are recorded as that array, so the next render can skip the check.
        const read = scopeVars();
        const varsIn = read !== undefined && scopeNow !== undefined && sameEntries(read, scopeNow) ? scopeNow : read;
        // The same loop object as the library's evaluateFor builds (keys and values); see sameLoopValue.
        const loop = loopObject(i);
        const loopValue = new R.Object(loop);
        scope.setVariable('loop', loopValue);
        scope.setVariable(loopVar, items[i]!);
        this.memo.evaluated++;
        // Evaluate with `messages`, `loop` and the namespaces recording what the body reads.
        const arrayReads: Array<number | 'length'> = [];
        let whole = false;
        const proxy = new Proxy(items, {
          get(t, p) {
            if (p === 'at') {
              return (k: number) => {
                arrayReads.push(k);
                return t.at(k);
              };
            }
            if (p === 'length') {
              arrayReads.push('length');
              return t.length;
            }
            if (typeof p === 'string' && /^(0|[1-9]\d*)$/.test(p)) {
              arrayReads.push(Number(p));
              return t[Number(p)];
            }
            whole = true;
            const v = Reflect.get(t, p, t) as unknown;
            return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
          },
          has(t, p) {
            whole = true;
            return Reflect.has(t, p);
          },
          ownKeys(t) {
            whole = true;
            return Reflect.ownKeys(t);
          },
          getOwnPropertyDescriptor(t, p) {
            whole = true;
            return Reflect.getOwnPropertyDescriptor(t, p);
          },
        });
        const nsStart = nsMaps.map((m) => new Map(m.raw()));
        for (const m of nsMaps) {
          m.reads = new Set();
          m.writes = new Set();
          m.all = false;
        }
        loop.reads = new Set();
        // Swapped into the same ArrayValue, so `messages` keeps its identity (`==` on lists is
        // identity); the cached builtins (`length`) are dropped so that they read the proxy.
        const arrayValue = messagesValue as RV & { _builtins?: unknown };
        arrayValue.value = proxy;
        arrayValue._builtins = undefined;
        const predicates: NamespacePredicate[] = [];
        const outerRecording = this.recording;
        const recording = { nsMaps, predicates, tainted: false };
        this.recording = recording;
        let output: string;
        try {
          output = this.evaluateBlock(node.body, scope).value as string;
        } finally {
          arrayValue.value = items;
          arrayValue._builtins = undefined;
          this.recording = outerRecording;
        }
        const loopReads = loop.all ? 'all' : [...loop.reads!];
        loop.reads = undefined;
        const nsReads: NamespaceReads[] = [];
        const nsWrites: IterRecord['nsWrites'] = [];
        let plain = true;
        nsMaps.forEach((m, idx) => {
          if (m.all || m.reads!.size > 0) {
            const keys = m.all ? 'all' : [...m.reads!];
            const start = nsStart[idx]!;
            nsReads.push({ map: idx, keys, start });
            if (keys === 'all' ? [...start.values()].some((v) => !isPlain(v)) : keys.some((k) => start.has(k) && !isPlain(start.get(k)))) plain = false;
          }
          if (m.writes!.size > 0) {
            const written: Array<[string, RV]> = [...m.writes!].map((k) => [k, m.peek(k)!]);
            nsWrites.push([idx, written]);
            if (written.some(([, v]) => !isPlain(v))) plain = false;
          }
          m.reads = undefined;
          m.writes = undefined;
        });
        const varsOut = scopeVars();
        scopeNow = varsOut;
        // A body that reassigns the loop variable or `loop` leaves state a reuse would not restore.
        const loopIntact = scope.variables.get(loopVar) === items[i] && scope.variables.get('loop') === loopValue;
        commit(
          i,
          varsIn && varsOut && !whole && plain && !recording.tainted && loopIntact
            ? { message: items[i]!, varsIn, varsOut, loop, loopReads, arrayReads, arrayRef: items, nsReads, nsWrites, nsPredicates: predicates, output }
            : undefined,
          output,
        );
        if (output.length > 0) this.pieces.push(output);
        out += output;
      }
      // A closure over the loop scope (a `caller` kept in a namespace) may run after the loop:
      // leave `loop` and the loop variable as the last iteration of a full evaluation does.
      if (lastReused) {
        scope.setVariable('loop', new R.Object(loopObject(n - 1)));
        scope.setVariable(loopVar, items[n - 1]!);
      }
      record.text = out;
      return out;
    }

    /**
     * The largest k such that iterations [0, k) of this render read exactly what they read in
     * the previous one, so each gives the same output and leaves the same state, without
     * looking at their records one by one (a long conversation is mostly such a prefix). By
     * induction over i < k, with the loop's outer values equal (`reuse`) and its scope fresh:
     * - message i is the same value (i < k0, the shared prefix of the two lists by identity),
     *   and so is every message it read by position (dep[i] < k0; loop.last is false in both);
     * - the state it starts from is the previous state, except namespace keys that differed
     *   when the loop started and that no iteration before i has written since (a write leaves
     *   the previous value, by induction). Such a dirty key may not be read at i (reads), and
     *   its comparisons at i must give the recorded answers with its value now (at i itself a
     *   write may come first: then the value compared followed from equal inputs, and the
     *   check is only stricter), nor may i read a namespace whole (readsAll). The order of a
     *   namespace's keys is state too (`{{ ns }}` prints them in it): keys in another order at
     *   the loop's start also stop the prefix at the first whole read, and keys the prefix
     *   creates are restored in the order of their first writes.
     * Cost: O(k) over two arrays of small numbers and the lists' slots, plus the dirty keys' events.
     */
    private reusablePrefix(prev: LoopRecord, items: RV[], nsMaps: RecordingMap[]): number {
      const old = prev.items;
      let k0 = 0;
      const limit = Math.min(items.length, old.length);
      while (k0 < limit && items[k0] === old[k0]) k0++;
      let k = 0;
      const dep = prev.dep;
      while (k < k0 && dep[k]! < k0) k++;
      if (k === 0 || nsMaps.length !== prev.nsStart.length) return 0;
      const eq = this.equal;
      let dirty = false;
      for (let m = 0; m < nsMaps.length && k > 0; m++) {
        const now = nsMaps[m]!;
        const then = prev.nsStart[m]!;
        const keys = new Set<string>(then.keys());
        const nowKeys = now.raw();
        // The same keys in another order print differently when the namespace is read whole.
        let order = 0;
        for (const key of then.keys()) if (order < nowKeys.length && nowKeys[order]![0] === key) order++;
        if (order !== then.size || nowKeys.length !== then.size) dirty = true;
        for (const [key] of nowKeys) keys.add(key);
        for (const key of keys) {
          if (eq.eq(now.peek(key), then.get(key))) continue;
          dirty = true;
          const ev = prev.events.get(eventKey(m, key));
          if (ev === undefined) continue; // never touched by an iteration
          const until = Math.min(k - 1, ev.writes.length > 0 ? ev.writes[0]! : Infinity); // dirty on [0, until]
          if (ev.reads.length > 0 && ev.reads[0]! <= until) k = Math.min(k, ev.reads[0]!);
          const value = now.peek(key) ?? UNDEFINED;
          const numeric = isNumeric(value);
          const v = value.value as number;
          for (let p = 0; p < ev.preds.length && ev.preds[p]! <= Math.min(until, k - 1); p++) {
            const op = ev.predOp[p]!;
            const same =
              numeric && op !== 0
                ? compareNumbers(op, ev.predNsLeft[p] === 1 ? v : ev.predOther[p]!, ev.predNsLeft[p] === 1 ? ev.predOther[p]! : v) === (ev.predWant[p] === 1)
                : this.sameAnswer(ev.predRecs[p]!, value);
            if (!same) {
              k = ev.preds[p]!;
              break;
            }
          }
        }
      }
      if (dirty && prev.readsAll.length > 0) k = Math.min(k, prev.readsAll[0]!);
      return k;
    }

    /**
     * Iterations [0, k) of prev's indexes, taken over into record: prev's arrays themselves, cut
     * at k (no copies: prev is not read after this render, and a render that throws resets the memo).
     */
    private adoptPrefix(record: LoopRecord, prev: LoopRecord, k: number): void {
      record.iters = prev.iters;
      record.iters.length = k;
      record.dep = prev.dep;
      record.dep.length = k;
      record.cumLen = prev.cumLen;
      record.cumLen.length = k + 1;
      record.cumPieces = prev.cumPieces;
      record.cumPieces.length = k + 1;
      record.pieceList = prev.pieceList;
      record.pieceList.length = record.cumPieces[k]!;
      record.readsAll = prev.readsAll;
      truncateAt(k, record.readsAll);
      record.events = prev.events;
      record.events.forEach((ev, key) => {
        truncateAt(k, ev.reads);
        truncateAt(k, ev.writes, ev.values);
        truncateAt(k, ev.preds, ev.predRecs, ev.predOp, ev.predOther, ev.predNsLeft, ev.predWant);
        if (ev.reads.length + ev.writes.length + ev.preds.length === 0) record.events.delete(key);
      });
    }

    /** Everything else the previous evaluation of iteration i read is equal now (its loop-scope variables: scopeIs). */
    private sameInputs(old: IterRecord, items: RV[], i: number, nsMaps: RecordingMap[]): boolean {
      const eq = this.equal;
      if (!eq.eq(items[i], old.message)) return false;
      for (let w = 0; w < old.nsWrites.length; w++) if (nsMaps[old.nsWrites[w]![0]] === undefined) return false;
      const n = items.length;
      if (old.loopReads === 'all') {
        const entries = old.loop.raw();
        if (entries.length !== LOOP_KEYS.length || entries.some(([k], j) => k !== LOOP_KEYS[j])) return false;
        for (const k of LOOP_KEYS) if (!sameLoopValue(k, old.loop.peek(k), i, n, items, eq)) return false;
      } else {
        const keys = old.loopReads;
        for (let j = 0; j < keys.length; j++) if (!sameLoopValue(keys[j]!, old.loop.peek(keys[j]!), i, n, items, eq)) return false;
      }
      for (const r of old.arrayReads) {
        if (r === 'length' ? n !== old.arrayRef.length : !eq.eq(items.at(r), old.arrayRef.at(r))) return false;
      }
      for (const { map, keys: nsKeys, start } of old.nsReads) {
        const now = nsMaps[map];
        if (now === undefined) return false;
        if (nsKeys === 'all') {
          if (!eq.entries(now.raw(), [...start])) return false;
        } else {
          for (const k of nsKeys) if (!eq.eq(now.peek(k), start.get(k))) return false;
        }
      }
      // A comparison gives the same answer with the key's value now. (If the iteration wrote the
      // key before comparing, the compared value followed from its other inputs, which are equal,
      // so the answer is the recorded one either way; this check is then only stricter.)
      for (const p of old.nsPredicates) {
        if (nsMaps[p.map] === undefined || !this.sameAnswer(p, nsMaps[p.map]!.peek(p.key) ?? UNDEFINED)) return false;
      }
      return true;
    }

    /** Whether comparison p gives its recorded answer with the key's value `now`. */
    private sameAnswer(p: NamespacePredicate, now: RV): boolean {
      const fast = scalarComparison(p.node.operator.value as string, p.nsOnLeft ? now : p.other, p.nsOnLeft ? p.other : now);
      if (fast !== undefined) return p.result.type === 'BooleanValue' && p.result.value === fast;
      let answer: RV;
      try {
        answer = this.compare(p.node, p.nsOnLeft, now, p.other, this.global as Env);
      } catch {
        return false;
      }
      return this.equal.eq(answer, p.result);
    }
  }
  memoInterpreterClass = Memo as unknown as typeof memoInterpreterClass;
  return memoInterpreterClass!;
}

/** An interpreter that reuses and refreshes `memo`; its `pieces` are the output's top-level parts. */
export function createMemoInterpreter(env: unknown, memo: RenderMemo): MemoInterpreter {
  memo.reused = 0;
  memo.evaluated = 0;
  return new (interpreterClass())(env, memo);
}

/**
 * Length of a prefix that the texts made of `oldPieces` and `pieces` share, from the pieces:
 * equal pieces (usually the same string objects: O(1)) then the common prefix of the first
 * pair that differs. A lower bound of the exact common prefix, which is all a session needs.
 */
export function certifiedCommonPrefix(oldPieces: readonly string[], pieces: readonly string[], shared = { pieces: 0, length: 0 }): number {
  // The caller's word that the first shared.pieces pieces are the old ones (see Memo.shared).
  let common = shared.length;
  let i = shared.pieces;
  const n = Math.min(oldPieces.length, pieces.length);
  while (i < n && oldPieces[i] === pieces[i]) common += pieces[i++]!.length;
  let partial = 0;
  if (i < n) {
    partial = commonPrefixLength(oldPieces[i]!, pieces[i]!);
    common += partial;
  }
  // Never end between the halves of a surrogate pair (a piece may end inside one that the
  // next piece completes); a shorter bound is still a bound.
  const before = partial > 0 ? pieces[i]!.charCodeAt(partial - 1) : i > 0 ? pieces[i - 1]!.charCodeAt(pieces[i - 1]!.length - 1) : 0;
  if (before >= 0xd800 && before <= 0xdbff) common--;
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
