import type { Expr } from './ast.js';
import { SyntaxErr, type Token } from './lexer.js';
import { LimitError, PyFloat } from './values.js';

/**
 * The expression half of Jinja2's parser (jinja2/parser.py parse_tuple down to parse_primary and
 * the postfix, filter and test chains), and the token helpers the statement half (parser.ts)
 * shares: the same precedence (or < and < not < comparisons < + - < ~ < * / // % < ** < unary,
 * with filters and tests binding to the unary operand).
 */
export class ExprParser {
  protected i = 0;
  protected depth = 0;
  constructor(
    protected readonly toks: Token[],
    protected readonly maxDepth: number,
  ) {}

  protected get cur(): Token {
    return this.toks[this.i]!;
  }
  protected peek(k = 1): Token {
    return this.toks[Math.min(this.i + k, this.toks.length - 1)]!;
  }
  protected next(): Token {
    return this.toks[this.i++]!;
  }
  protected err(msg: string, tok = this.cur): never {
    throw new SyntaxErr(msg, tok.line);
  }
  protected isOp(v: string): boolean {
    return this.cur.type === 'op' && this.cur.value === v;
  }
  protected isName(v: string): boolean {
    return this.cur.type === 'name' && this.cur.value === v;
  }
  protected expectOp(v: string): Token {
    if (!this.isOp(v)) this.err(`expected '${v}', got '${this.cur.value || this.cur.type}'`);
    return this.next();
  }
  protected expectName(v?: string): string {
    if (this.cur.type !== 'name' || (v !== undefined && this.cur.value !== v)) this.err(`expected ${v ?? 'a name'}, got '${this.cur.value || this.cur.type}'`);
    return this.next().value;
  }
  protected enter(): void {
    if (++this.depth > this.maxDepth) throw new LimitError(`template nested more than ${this.maxDepth} levels deep`);
  }

  protected tupleExpr(simplified = false, noCond = false): Expr {
    const line = this.cur.line;
    const items: Expr[] = [];
    let comma = false;
    for (;;) {
      if (items.length) this.expectOp(',');
      if (this.cur.type === 'block_end' || this.cur.type === 'var_end' || this.isOp(')') || this.isName('if') || this.isName('recursive')) break;
      items.push(simplified ? this.primary() : noCond ? this.orExpr() : this.expr());
      if (this.isOp(',')) comma = true;
      else break;
    }
    if (!comma && items.length === 1) return items[0]!;
    if (items.length === 0 && !comma) this.err('expected an expression');
    return { t: 'tuple', items, line };
  }

  expr(): Expr {
    this.enter();
    try {
      const line = this.cur.line;
      const e = this.orExpr();
      if (this.isName('if')) {
        this.next();
        const test = this.orExpr();
        let els: Expr | null = null;
        if (this.isName('else')) {
          this.next();
          els = this.expr();
        }
        return { t: 'cond', test, yes: e, no: els, line };
      }
      return e;
    } finally {
      this.depth--;
    }
  }

  protected orExpr(): Expr {
    let left = this.andExpr();
    while (this.isName('or')) {
      const line = this.next().line;
      left = { t: 'or', left, right: this.andExpr(), line };
    }
    return left;
  }

  protected andExpr(): Expr {
    let left = this.notExpr();
    while (this.isName('and')) {
      const line = this.next().line;
      left = { t: 'and', left, right: this.notExpr(), line };
    }
    return left;
  }

  protected notExpr(): Expr {
    if (this.isName('not')) {
      const line = this.next().line;
      this.enter();
      try {
        return { t: 'not', arg: this.notExpr(), line };
      } finally {
        this.depth--;
      }
    }
    return this.compareExpr();
  }

  protected compareExpr(): Expr {
    const line = this.cur.line;
    const first = this.math1();
    const ops: Array<[string, Expr]> = [];
    for (;;) {
      const c = this.cur;
      if (c.type === 'op' && ['==', '!=', '<', '>', '<=', '>='].includes(c.value)) {
        this.next();
        ops.push([c.value, this.math1()]);
      } else if (this.isName('in')) {
        this.next();
        ops.push(['in', this.math1()]);
      } else if (this.isName('not') && this.peek().type === 'name' && this.peek().value === 'in') {
        this.next();
        this.next();
        ops.push(['notin', this.math1()]);
      } else break;
    }
    return ops.length ? { t: 'compare', first, ops, line } : first;
  }

  protected binary(next: () => Expr, ops: string[]): Expr {
    let left = next();
    while (this.cur.type === 'op' && ops.includes(this.cur.value)) {
      const t = this.next();
      left = { t: 'bin', op: t.value, left, right: next(), line: t.line };
    }
    return left;
  }
  protected math1 = (): Expr => this.binary(this.concat, ['+', '-']);
  protected concat = (): Expr => this.binary(this.math2, ['~']);
  protected math2 = (): Expr => this.binary(this.pow, ['*', '/', '//', '%']);
  protected pow = (): Expr => this.binary(() => this.unary(true), ['**']);

  protected unary(withFilter: boolean): Expr {
    this.enter();
    try {
      const line = this.cur.line;
      let node: Expr;
      if (this.isOp('-')) {
        this.next();
        node = { t: 'neg', arg: this.unary(false), line };
      } else if (this.isOp('+')) {
        this.next();
        node = { t: 'pos', arg: this.unary(false), line };
      } else node = this.primary();
      node = this.postfix(node);
      return withFilter ? this.filterExpr(node) : node;
    } finally {
      this.depth--;
    }
  }

  protected primary(): Expr {
    const t = this.next();
    const line = t.line;
    switch (t.type) {
      case 'name':
        switch (t.value) {
          case 'true':
          case 'True':
            return { t: 'const', v: true, line };
          case 'false':
          case 'False':
            return { t: 'const', v: false, line };
          case 'none':
          case 'None':
            return { t: 'const', v: null, line };
          default:
            return { t: 'name', name: t.value, line };
        }
      case 'string': {
        let v = t.value;
        while (this.cur.type === 'string') v += this.next().value;
        return { t: 'const', v, line };
      }
      case 'int': {
        const s = t.value.toLowerCase();
        const big = s.startsWith('0b') || s.startsWith('0o') || s.startsWith('0x') ? BigInt(s) : BigInt(s);
        const n = Number(big);
        return { t: 'const', v: Number.isSafeInteger(n) ? n : big, line };
      }
      case 'float': {
        const n = Number(t.value);
        return { t: 'const', v: Number.isInteger(n) ? new PyFloat(n) : n, line };
      }
      case 'op':
        if (t.value === '(') {
          if (this.isOp(')')) {
            this.next();
            return { t: 'tuple', items: [], line };
          }
          const first = this.expr();
          if (this.isOp(')')) {
            this.next();
            return first;
          }
          const items = [first];
          while (this.isOp(',')) {
            this.next();
            if (this.isOp(')')) break;
            items.push(this.expr());
          }
          this.expectOp(')');
          return { t: 'tuple', items, line };
        }
        if (t.value === '[') {
          const items: Expr[] = [];
          while (!this.isOp(']')) {
            if (items.length) this.expectOp(',');
            if (this.isOp(']')) break;
            items.push(this.expr());
          }
          this.next();
          return { t: 'list', items, line };
        }
        if (t.value === '{') {
          const keys: Expr[] = [];
          const values: Expr[] = [];
          while (!this.isOp('}')) {
            if (keys.length) this.expectOp(',');
            if (this.isOp('}')) break;
            keys.push(this.expr());
            this.expectOp(':');
            values.push(this.expr());
          }
          this.next();
          return { t: 'dict', keys, values, line };
        }
        break;
      default:
        break;
    }
    return this.err(`unexpected '${t.value || t.type}'`, t);
  }

  protected postfix(node: Expr): Expr {
    for (;;) {
      const line = this.cur.line;
      if (this.isOp('.')) {
        this.next();
        const t = this.next();
        if (t.type === 'name') node = { t: 'getattr', obj: node, name: t.value, line };
        else if (t.type === 'int') node = { t: 'getitem', obj: node, key: { t: 'const', v: Number(t.value), line }, line };
        else this.err('expected name or number', t);
      } else if (this.isOp('[')) {
        this.next();
        node = this.subscript(node, line);
      } else if (this.isOp('(')) {
        node = this.call(node);
      } else return node;
    }
  }

  protected subscript(obj: Expr, line: number): Expr {
    const part = (): Expr | null => (this.isOp(':') || this.isOp(']') || this.isOp(',') ? null : this.expr());
    const start = part();
    if (this.isOp(':')) {
      this.next();
      const stop = part();
      let step: Expr | null = null;
      if (this.isOp(':')) {
        this.next();
        step = part();
      }
      this.expectOp(']');
      return { t: 'slice', obj, start, stop, step, line };
    }
    if (start === null) this.err('expected subscript');
    if (this.isOp(',')) {
      const items = [start];
      while (this.isOp(',')) {
        this.next();
        if (this.isOp(']')) break;
        items.push(this.expr());
      }
      this.expectOp(']');
      return { t: 'getitem', obj, key: { t: 'tuple', items, line }, line };
    }
    this.expectOp(']');
    return { t: 'getitem', obj, key: start, line };
  }

  protected callArgs(): { args: Expr[]; kwargs: Array<[string, Expr]>; star?: Expr; dstar?: Expr } {
    this.expectOp('(');
    const args: Expr[] = [];
    const kwargs: Array<[string, Expr]> = [];
    let star: Expr | undefined;
    let dstar: Expr | undefined;
    while (!this.isOp(')')) {
      if (args.length || kwargs.length || star || dstar) this.expectOp(',');
      if (this.isOp(')')) break;
      // *args and **kwargs (Jinja2's parse_call_args).
      if (this.isOp('*') || this.isOp('**')) {
        const two = this.next().value === '**';
        if (two) dstar = this.expr();
        else star = this.expr();
        continue;
      }
      if (this.cur.type === 'name' && this.peek().type === 'op' && this.peek().value === '=') {
        const kt = this.next();
        const k = kt.value;
        if (kwargs.some(([x]) => x === k)) this.err(`keyword argument repeated: ${k}`, kt);
        this.next();
        kwargs.push([k, this.expr()]);
      } else {
        if (kwargs.length) this.err('positional argument follows keyword argument');
        args.push(this.expr());
      }
    }
    this.next();
    return { args, kwargs, star, dstar };
  }

  protected call(fn: Expr): Expr {
    const line = this.cur.line;
    return { t: 'call', fn, ...this.callArgs(), line };
  }

  protected filterChain(arg: Expr | null): Expr[] {
    const out: Expr[] = [];
    for (;;) {
      const line = this.cur.line;
      let name = this.expectName();
      while (this.isOp('.')) {
        this.next();
        name += `.${this.expectName()}`;
      }
      const { args, kwargs } = this.isOp('(') ? this.callArgs() : { args: [], kwargs: [] };
      out.push({ t: 'filter', name, arg, args, kwargs, line });
      if (!this.isOp('|')) return out;
      this.next();
    }
  }

  protected filterExpr(node: Expr): Expr {
    for (;;) {
      if (this.isOp('|')) {
        this.next();
        const line = this.cur.line;
        const name = this.expectName();
        const { args, kwargs } = this.isOp('(') ? this.callArgs() : { args: [], kwargs: [] };
        node = { t: 'filter', name, arg: node, args, kwargs, line };
      } else if (this.isName('is')) {
        const line = this.next().line;
        let negated = false;
        if (this.isName('not')) {
          this.next();
          negated = true;
        }
        let name = this.expectName();
        while (this.isOp('.')) {
          this.next();
          name += `.${this.expectName()}`;
        }
        let args: Expr[] = [];
        let kwargs: Array<[string, Expr]> = [];
        const c = this.cur;
        if (this.isOp('(')) ({ args, kwargs } = this.callArgs());
        else if (
          (['name', 'string', 'int', 'float'].includes(c.type) || (c.type === 'op' && (c.value === '[' || c.value === '{' || c.value === '-'))) &&
          !(c.type === 'name' && ['else', 'or', 'and', 'if'].includes(c.value))
        ) {
          if (this.isName('is')) this.err('You cannot chain multiple tests with is');
          args = [this.postfix(this.primary())];
        }
        node = { t: 'test', name, arg: node, args, kwargs, negated, line };
      } else if (this.isOp('(')) {
        node = this.call(node);
      } else return node;
    }
  }
}
