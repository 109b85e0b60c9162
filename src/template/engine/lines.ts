import type { Expr } from './ast.js';

/**
 * The template line Jinja2 names for an error in an expression. Jinja2 compiles a statement's
 * expression to one line of Python, so a traceback names the line of the statement's node: for
 * `{{ ... }}` the line its outermost expression node carries (jinja2/parser.py), for a tag the
 * tag's line. Where that is not the node's own token: a binary operator, `and`/`or`, `~` and a
 * conditional expression carry the line their first operand starts on (a chain's later links
 * the line of their own operator), a comparison the line after its last operand.
 */
export function statementLine(e: Expr): number {
  switch (e.t) {
    case 'bin':
      if (e.op === '~') return startLine(e);
      return e.left.t === 'bin' && group(e.left.op) === group(e.op) ? e.line : startLine(e.left);
    case 'and':
    case 'or':
      return e.left.t === e.t ? e.line : startLine(e.left);
    case 'cond':
      return startLine(e.yes);
    case 'compare':
      return startLine(e.ops[e.ops.length - 1]![1]);
    default:
      return e.line;
  }
}

function group(op: string): number {
  return op === '+' || op === '-' ? 0 : op === '~' ? 1 : op === '**' ? 3 : 2;
}

/** The line of an expression's first token. */
export function startLine(e: Expr): number {
  switch (e.t) {
    case 'bin':
    case 'and':
    case 'or':
      return startLine(e.left);
    case 'compare':
      return startLine(e.first);
    case 'cond':
      return startLine(e.yes);
    case 'getattr':
    case 'getitem':
    case 'slice':
      return startLine(e.obj);
    case 'call':
      return startLine(e.fn);
    case 'filter':
      return e.arg ? startLine(e.arg) : e.line;
    case 'test':
      return startLine(e.arg);
    default:
      return e.line;
  }
}
