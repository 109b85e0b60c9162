import { PromptencError } from '../errors.js';
import type { Backend, BackendKind } from './types.js';

/** The error of every call on a disposed tokenizer. */
export function disposedError(): PromptencError {
  return new PromptencError('E_DISPOSED', 'this tokenizer was disposed (tokenizer.dispose()): load a new one');
}

/**
 * What a disposed tokenizer encodes with: every method throws E_DISPOSED (an async one
 * rejects, since its caller is async). A Proxy, so a method added to Backend later cannot be
 * left out.
 */
export function disposedBackend(kind: BackendKind): Backend {
  const fail = (): never => {
    throw disposedError();
  };
  return new Proxy({} as Backend, {
    get(_target, prop) {
      if (prop === 'kind') return kind;
      if (prop === 'vocabulary') return undefined;
      if (prop === 'dispose') return () => {};
      return fail;
    },
  });
}
