import type { Run } from './runtime.js';
import { fail, PyCallable, PyObject, tuple } from './values.js';

/**
 * Jinja2's cycler, joiner and `self` globals (jinja2/utils.py Cycler and Joiner, jinja2/runtime.py
 * TemplateReference). A cycler or joiner is state a template mutates by calling it, so inside an
 * incrementally rendered iteration every call marks the iteration as not reusable.
 */
class Cycler extends PyObject {
  pos = 0;
  constructor(
    private readonly r: Run,
    readonly items: unknown[],
  ) {
    super();
  }
  attr(name: string): unknown {
    switch (name) {
      case 'current':
        return this.items[this.pos];
      case 'items':
        return tuple(this.items);
      case 'pos':
        return this.pos;
      case 'next':
      case '__next__':
        return new PyCallable('next', () => {
          this.r.impure();
          const rv = this.items[this.pos];
          this.pos = (this.pos + 1) % this.items.length;
          return rv;
        });
      case 'reset':
        return new PyCallable('reset', () => {
          this.r.impure();
          this.pos = 0;
          return null;
        });
      default:
        return undefined;
    }
  }
}

/** `self` in a template without blocks: attributes are Undefined; prints as Jinja2's does. */
class TemplateReference extends PyObject {
  attr(): unknown {
    return undefined;
  }
  override toString(): string {
    return '<TemplateReference None>';
  }
}

export function extraGlobals(r: Run): Array<[string, unknown]> {
  return [
    [
      'cycler',
      new PyCallable(
        'cycler',
        (a) => {
          if (a.length === 0) fail('at least one item has to be provided');
          return new Cycler(r, [...a]);
        },
        'global:cycler',
      ),
    ],
    [
      'joiner',
      new PyCallable(
        'joiner',
        (a, k) => {
          const sep = k?.has('sep') ? k.get('sep') : a.length ? a[0] : ', ';
          let used = false;
          return new PyCallable('joiner', () => {
            r.impure();
            if (used) return sep;
            used = true;
            return '';
          });
        },
        'global:joiner',
      ),
    ],
    ['self', new TemplateReference()],
  ];
}
