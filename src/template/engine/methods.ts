import {
  dictEntries,
  dictGet,
  dictHas,
  dictKeys,
  eq,
  fail,
  isDict,
  isInt,
  Namespace,
  nsHook,
  num,
  Markup,
  PyCallable,
  PyObject,
  PyTuple,
  PyView,
  Range,
  repr,
  str,
  TemplateError,
  tuple,
  typeName,
} from './values.js';
import { mark, markupMethod } from './markup.js';
import { methodArgs, NO_METHOD, STR_METHODS, strMethod } from './str-methods.js';

export { pyCapitalize, pyTitle } from './pyunicode.js';
export { pySplit, pySplitlines, pyStrip } from './str-methods.js';

/**
 * Methods of Python's dict and list that templates call (`tool.items()`, ...; str's are in
 * str-methods.ts), and attribute lookup: Jinja2's `obj.name` is getattr first, then
 * obj['name']; `obj['name']` is the item first, then getattr (jinja2/environment.py getattr /
 * getitem). The immutable sandbox refuses the methods that mutate a list or dict.
 */
type Kw = Map<string, unknown> | null;

const DICT_METHODS = new Set(['items', 'keys', 'values', 'get', 'copy']);
const DICT_UNSAFE = new Set(['pop', 'popitem', 'setdefault', 'update', 'clear']);
const LIST_METHODS = new Set(['index', 'count', 'copy']);
const LIST_UNSAFE = new Set(['append', 'extend', 'insert', 'pop', 'remove', 'reverse', 'sort', 'clear']);

function pair(k: unknown, v: unknown): PyTuple {
  const t = new PyTuple();
  t.push(k, v);
  return t;
}

function dictMethod(d: Record<string, unknown> | Map<unknown, unknown>, name: string, a: unknown[]): unknown {
  switch (name) {
    case 'items': {
      // The pairs are built directly (no [k, v] array per entry to copy): `for k, v in x.items()` is hot.
      const items: PyTuple[] = [];
      if (d instanceof Map)
        d.forEach((v, k) => {
          items.push(pair(k, v));
        });
      else for (const k of Object.keys(d)) items.push(pair(k, d[k]));
      return new PyView(items, 'dict_items');
    }
    case 'keys':
      return new PyView(dictKeys(d), 'dict_keys');
    case 'values':
      return new PyView(
        dictEntries(d).map(([, v]) => v),
        'dict_values',
      );
    case 'get':
      return dictHas(d, a[0]) ? dictGet(d, a[0]) : a.length > 1 ? a[1] : null;
    case 'copy':
      return new Map(dictEntries(d));
    default:
      return NO_METHOD;
  }
}

function listMethod(l: unknown[], name: string, a: unknown[]): unknown {
  switch (name) {
    case 'index': {
      const n = l.length;
      const norm = (v: unknown, d: number) => (v === undefined || v === null ? d : num(v) < 0 ? Math.max(0, num(v) + n) : Math.min(num(v), n));
      const end = norm(a[2], n);
      for (let i = norm(a[1], 0); i < end; i++) if (eq(l[i], a[0])) return i;
      return fail(`${repr(a[0])} is not in ${typeName(l)}`);
    }
    case 'count':
      return l.filter((x) => eq(x, a[0])).length;
    case 'copy':
      return [...l];
    default:
      return NO_METHOD;
  }
}

/** `obj.name(args)`, without building a bound method. */
export function callMethod(obj: unknown, name: string, args: unknown[], kwargs: Kw, call: (f: unknown, a: unknown[], k: Kw) => unknown): unknown {
  let r: unknown = NO_METHOD;
  if (obj instanceof Markup) {
    if (STR_METHODS.has(name)) return markupMethod(obj, name, args, kwargs, (s, n, a, k) => strMethod(s, n, methodArgs(n, a, k), k));
  } else if (typeof obj === 'string') {
    if (STR_METHODS.has(name)) r = strMethod(obj, name, methodArgs(name, args, kwargs), kwargs);
  } else if (Array.isArray(obj)) {
    if (LIST_UNSAFE.has(name)) throw new TemplateError(`access to attribute '${name}' of '${typeName(obj)}' object is unsafe.`);
    if (LIST_METHODS.has(name) && !(name === 'copy' && obj instanceof PyTuple)) r = listMethod(obj, name, args);
  } else if (isDict(obj)) {
    if (DICT_UNSAFE.has(name)) throw new TemplateError(`access to attribute '${name}' of 'dict' object is unsafe.`);
    if (DICT_METHODS.has(name)) r = dictMethod(obj, name, args);
  }
  if (r !== NO_METHOD) return r;
  return call(getattr(obj, name), args, kwargs);
}

/** dir(jinja2.Undefined()) and dir({}) (Python 3.11, Jinja2 3.1): the underscore names they have. */
const UNDEFINED_ATTRS = new Set(
  '__add__ __aiter__ __bool__ __call__ __class__ __complex__ __delattr__ __dir__ __div__ __doc__ __eq__ __float__ __floordiv__ __format__ __ge__ __getattr__ __getattribute__ __getitem__ __getstate__ __gt__ __hash__ __init__ __init_subclass__ __int__ __iter__ __le__ __len__ __lt__ __mod__ __module__ __mul__ __ne__ __neg__ __new__ __pos__ __pow__ __radd__ __rdiv__ __reduce__ __reduce_ex__ __repr__ __rfloordiv__ __rmod__ __rmul__ __rpow__ __rsub__ __rtruediv__ __setattr__ __sizeof__ __slots__ __str__ __sub__ __subclasshook__ __truediv__ _fail_with_undefined_error _undefined_exception _undefined_hint _undefined_message _undefined_name _undefined_obj'.split(
    ' ',
  ),
);
const DICT_ATTRS = new Set(
  '__class__ __class_getitem__ __contains__ __delattr__ __delitem__ __dir__ __doc__ __eq__ __format__ __ge__ __getattribute__ __getitem__ __getstate__ __gt__ __hash__ __init__ __init_subclass__ __ior__ __iter__ __le__ __len__ __lt__ __ne__ __new__ __or__ __reduce__ __reduce_ex__ __repr__ __reversed__ __ror__ __setattr__ __setitem__ __sizeof__ __str__ __subclasshook__'.split(
    ' ',
  ),
);

/** Jinja2 `obj.name`: attribute (a method, a namespace's or loop's field) first, then item. */
export function getattr(obj: unknown, name: string): unknown {
  if (obj === undefined) {
    // An attribute Undefined itself has (its dunders, its slots) is found, and the sandbox then
    // reads it as an unsafe Undefined; any other attribute of Undefined raises UndefinedError.
    if (name.startsWith('_') && UNDEFINED_ATTRS.has(name)) return undefined;
    throw new TemplateError(`'${name}' is undefined (attribute of an undefined value)`);
  }
  // The sandbox (SandboxedEnvironment.getattr): an attribute the object has whose name starts
  // with an underscore is unsafe and reads as Undefined; a name it lacks falls back to obj[name],
  // so a dict's own '_key' item is found.
  if (name.startsWith('_')) return isDict(obj) && !DICT_ATTRS.has(name) ? dictGet(obj, name) : undefined;
  if (obj === null) return undefined;
  if (obj instanceof Namespace) {
    const v = obj.attrs.get(name);
    nsHook.read?.(obj, name, v);
    return v;
  }
  if (obj instanceof PyObject) {
    if (obj instanceof Markup) return STR_METHODS.has(name) ? bound(obj, name) : undefined;
    return (obj as unknown as { attr?: (n: string) => unknown }).attr?.(name);
  }
  if (typeof obj === 'string') return STR_METHODS.has(name) ? bound(obj, name) : undefined;
  if (Array.isArray(obj)) {
    const own = (obj as { attr?: (n: string) => unknown }).attr;
    if (typeof own === 'function') return own.call(obj, name);
    return LIST_METHODS.has(name) && !(name === 'copy' && obj instanceof PyTuple) ? bound(obj, name) : undefined;
  }
  if (isDict(obj)) {
    if (DICT_METHODS.has(name)) return bound(obj, name);
    return dictGet(obj, name);
  }
  return undefined;
}

function bound(obj: unknown, name: string): PyCallable {
  return new PyCallable(name, (args, kwargs) => callMethod(obj, name, args, kwargs, () => undefined), `method:${name}`);
}

/** Jinja2 `obj[key]`: item first, then attribute (for a string key). */
export function getitem(obj: unknown, keyIn: unknown): unknown {
  if (obj === undefined) throw new TemplateError(`undefined value has no item ${str(keyIn)}`);
  const key = keyIn instanceof Markup ? keyIn.s : keyIn;
  if (Array.isArray(obj) || typeof obj === 'string') {
    if (typeof key === 'number' && Number.isInteger(key)) {
      if (typeof obj === 'string') {
        const cs = Array.from(obj);
        const k = key < 0 ? cs.length + key : key;
        return k >= 0 && k < cs.length ? cs[k] : undefined;
      }
      const k = key < 0 ? obj.length + key : key;
      return k >= 0 && k < obj.length ? obj[k] : undefined;
    }
    if (typeof key === 'boolean') return getitem(obj, key ? 1 : 0);
    return typeof key === 'string' ? getattr(obj, key) : undefined;
  }
  if (isDict(obj)) {
    if (dictHas(obj, key)) return dictGet(obj, key);
    if (typeof key === 'boolean' && obj instanceof Map) return obj.get(key ? 1 : 0);
    // A tuple key is found by value (Python hashes it), not by identity.
    if (key instanceof PyTuple && obj instanceof Map) for (const [k, v] of obj) if (eq(k, key)) return v;
    if (typeof key === 'number' && obj instanceof Map && obj.has(key === 1)) return undefined;
    return typeof key === 'string' && DICT_METHODS.has(key) ? bound(obj, key) : undefined;
  }
  if (obj instanceof Markup) return typeof key === 'string' ? getattr(obj, key) : mark(getitem(obj.s, key));
  if (obj instanceof Range && typeof key === 'number' && Number.isInteger(key)) {
    const k = key < 0 ? obj.length + key : key;
    return k >= 0 && k < obj.length ? obj.at(k) : undefined;
  }
  if (obj instanceof PyObject && typeof key === 'string') return getattr(obj, key);
  if (obj === null) return undefined;
  if (isInt(key) || typeof key === 'string') return undefined;
  return undefined;
}

/**
 * Python's slice.indices for n items: [start, stop, step], walked while i < stop (step > 0) or
 * i > stop (step < 0).
 */
function sliceIndices(n: number, start: unknown, stop: unknown, step: unknown): [number, number, number] {
  const st = step === null || step === undefined ? 1 : num(step);
  if (st === 0) fail('slice step cannot be zero');
  const norm = (v: unknown, def: number, lo: number, hi: number): number => {
    if (v === null || v === undefined) return def;
    let x = num(v);
    if (x < 0) x += n;
    return Math.min(Math.max(x, lo), hi);
  };
  return st > 0 ? [norm(start, 0, 0, n), norm(stop, n, 0, n), st] : [norm(start, n - 1, -1, n - 1), norm(stop, -1, -1, n - 1), st];
}

/** A slice of a range is a range (range(10)[1::2] is range(1, 10, 2)). */
function sliceRange(r: Range, start: unknown, stop: unknown, step: unknown): Range {
  const [a, b, st] = sliceIndices(r.length, start, stop, step);
  return new Range(r.start + a * r.step, r.start + b * r.step, r.step * st, r.check);
}

/** Python slicing (negative steps included). */
export function slice(obj: unknown, start: unknown, stop: unknown, step: unknown): unknown {
  if (obj === undefined) throw new TemplateError('undefined value cannot be sliced');
  if (obj instanceof Markup) return mark(slice(obj.s, start, stop, step));
  if (obj instanceof Range) return sliceRange(obj, start, stop, step);
  // Jinja2 compiles a slice to a plain Python subscript (not the sandbox's getitem): slicing
  // what is not a sequence raises TypeError.
  const seq: unknown[] | string[] =
    typeof obj === 'string' ? Array.from(obj) : Array.isArray(obj) ? obj : fail(`'${typeName(obj)}' object is not subscriptable`);
  const [a, b, st] = sliceIndices(seq.length, start, stop, step);
  const out: unknown[] = [];
  if (st > 0) for (let i = a; i < b; i += st) out.push(seq[i]);
  else for (let i = a; i > b; i += st) out.push(seq[i]);
  return typeof obj === 'string' ? out.join('') : Array.isArray(obj) && obj.constructor !== Array ? tuple(out) : out;
}
