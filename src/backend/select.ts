import { PromptencError } from '../errors.js';
import { createJsBackend } from './js.js';
import type { ModelScanner } from '../load.js';
import type { Backend, BackendChoice, BackendInit } from './types.js';

let warnedUnavailable = false;

type NativeModule = typeof import('./native.js');
let nativeModule: Promise<NativeModule> | undefined;
/** The native backend module, imported on first use (a JS-only load never imports it). */
function importNative(): Promise<NativeModule> {
  return (nativeModule ??= import('./native.js'));
}

/**
 * The reader of model.vocab / model.merges for readTokenizerFiles when `choice` may use the
 * native core (the slow part of a load was JSON.parse of those two values), else undefined.
 */
export async function modelScanner(choice: BackendChoice): Promise<ModelScanner | undefined> {
  if (choice === 'js') return undefined;
  try {
    return (await importNative()).prescanTokenizerJson;
  } catch {
    return undefined; // createBackend reports a native module that fails to load
  }
}

/**
 * Pick the backend: 'js' and 'native' are exact requests (native throws when it cannot
 * serve this tokenizer exactly); 'auto' prefers native and falls back to js, warning once
 * per process only when the addon itself is missing (an unsupported config is expected).
 */
export async function createBackend(init: BackendInit, choice: BackendChoice): Promise<Backend> {
  if (choice === 'js') return createJsBackend(init);
  let native: NativeModule;
  try {
    native = await importNative();
  } catch (err) {
    const e = new PromptencError('E_NATIVE_UNAVAILABLE', `native backend module failed to load: ${(err as Error).message}`, { cause: err });
    if (choice === 'native') throw e;
    return fallback(init, e);
  }
  try {
    return native.createNativeBackend(init);
  } catch (err) {
    if (choice === 'native' || !(err instanceof PromptencError)) throw err;
    if (err.code === 'E_NATIVE_UNSUPPORTED') return createJsBackend(init);
    if (err.code === 'E_NATIVE_UNAVAILABLE') return fallback(init, err);
    throw err;
  }
}

function fallback(init: BackendInit, err: PromptencError): Backend {
  if (!warnedUnavailable && !process.env.PROMPTENC_QUIET) {
    warnedUnavailable = true;
    // One line on stderr, not process.emitWarning: Node appends a second "--trace-warnings" line.
    process.stderr.write(`promptenc: warning: native addon unavailable, using the JS backend (${err.message.split('\n')[0]})\n`);
  }
  return createJsBackend(init);
}
