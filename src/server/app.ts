import { monitorEventLoopDelay } from 'node:perf_hooks';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { PromptencError } from '../errors.js';
import { ENDPOINTS } from './endpoints.js';
import type { Endpoint, HandlerContext } from './endpoint.js';
import { failureOf } from './errors.js';
import { execute, parseJsonBody, type JobResult } from './execute.js';
import { ModelRegistry, type ModelSpec } from './models.js';
import { WorkerPool, type PoolLimits } from './pool.js';
import { SessionStore, type SessionLimits } from './sessions.js';
import { compileSchema, schemaError } from './validate.js';

export interface ServerOptions {
  host: string;
  port: number;
  /** Largest accepted body in bytes (413 above). */
  maxBody: number;
  /** Worker threads for large bodies and sessions; 0 runs everything on the event loop. */
  threads: number;
  /** Bodies up to this many bytes without a session_id are handled on the event loop. */
  inlineMax: number;
  sessions: SessionLimits;
  /** Limits of a job on a worker thread (time, memory). */
  limits: PoolLimits;
  /** One line per request (JSON); default stderr. */
  log?: (line: string) => void;
}

export interface RunningServer {
  /** http://host:port */
  url: string;
  port: number;
  models: ModelRegistry;
  close(): Promise<void>;
}

/** A body kept as bytes for a worker thread: fastify's validator lets it through, the thread validates it. */
class RawBody {
  constructor(readonly bytes: Uint8Array) {}
}

interface RequestInfo {
  model?: string;
  tokens?: number;
  reused?: number;
  error?: { code: string; message: string; stack?: string };
}

const INFO = Symbol('promptenc.request');
type InfoRequest = FastifyRequest & { [INFO]?: RequestInfo };

const SESSION_PEEK = /"session_id"\s*:\s*"((?:[^"\\]|\\.){1,256})"/;
const PEEK_BYTES = 4096;

/**
 * The session_id of a large body without parsing it: searched in its first and last 4 KB, where
 * clients put small top-level fields. Only routing depends on it (which thread's session cache
 * is tried); a wrong or missed guess costs a full encode, never a wrong id.
 */
function peekSessionId(bytes: Uint8Array): string | undefined {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const head = SESSION_PEEK.exec(buf.toString('latin1', 0, Math.min(PEEK_BYTES, buf.length)));
  if (head) return head[1];
  const tail = SESSION_PEEK.exec(buf.toString('latin1', Math.max(0, buf.length - PEEK_BYTES)));
  return tail?.[1];
}

/**
 * Where a large body without a session_id goes: by its first 4 KB, so that a conversation resent
 * whole with one more turn meets the thread that kept it (prefix recognition). Conversations that
 * share a longer opening (one long system prompt) then share a home thread, which is only
 * preferred: while it is busy and another is less so, the body goes there (a cache miss).
 */
function routeKey(bytes: Uint8Array): { key: string; preferKey: boolean } {
  const id = peekSessionId(bytes);
  if (id !== undefined) return { key: id, preferKey: false };
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Only preferred: a busy thread gives way to an idler one (a miss there is a full encode).
  return { key: `\u0001${buf.toString('latin1', 0, Math.min(PEEK_BYTES, buf.length))}`, preferKey: true };
}

/** A body the thread may own: a Uint8Array alone on its ArrayBuffer (socket chunks may share one). */
function ownBytes(buf: Buffer): Uint8Array {
  if (buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength) return new Uint8Array(buf.buffer, 0, buf.byteLength);
  return new Uint8Array(buf);
}

function fastifyFailure(err: FastifyError, maxBody: number): PromptencError {
  if (err instanceof PromptencError) return err;
  if (err.statusCode === 413) return new PromptencError('E_BODY_TOO_LARGE', `body: larger than the server's --max-body of ${maxBody} bytes`);
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) return new PromptencError('E_REQUEST_INVALID', `request: ${err.message}`);
  return new PromptencError('E_INTERNAL', err.message);
}

let requestCounter = 0;
const REQUEST_ID = /^[\w.:-]{1,128}$/;

export async function startServer(specs: ModelSpec[], opts: ServerOptions): Promise<RunningServer> {
  const models = await ModelRegistry.load(specs);
  const pool =
    opts.threads > 0
      ? await WorkerPool.start(
          opts.threads,
          { specs, sessions: { ...opts.sessions, maxBytes: Math.floor(opts.sessions.maxBytes / opts.threads) } },
          opts.limits,
        )
      : undefined;
  // With threads, sessions live there (a conversation always meets the same thread); without, here.
  const ctx: HandlerContext = { models, sessions: pool ? undefined : new SessionStore(opts.sessions) };
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));

  const app: FastifyInstance = Fastify({
    logger: false,
    bodyLimit: opts.maxBody,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req-${process.pid.toString(36)}-${(++requestCounter).toString(36)}`;
    },
    forceCloseConnections: 'idle',
  });

  app.removeAllContentTypeParsers();
  // Every body is JSON whatever its content type (llama.cpp accepts any; curl -d sends form type).
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: opts.maxBody }, (_req, body: Buffer, done) => {
    if (pool && body.length > opts.inlineMax) return done(null, new RawBody(ownBytes(body)));
    try {
      done(null, parseJsonBody(body));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.setValidatorCompiler(({ schema }) => {
    const validate = compileSchema(schema as object);
    return (data: unknown) => {
      if (data instanceof RawBody || validate(data)) return { value: data };
      return { error: schemaError(validate.errors![0]!, data) };
    };
  });

  const info = (req: FastifyRequest): RequestInfo => ((req as InfoRequest)[INFO] ??= {});
  const send = (req: FastifyRequest, reply: FastifyReply, r: JobResult) => {
    Object.assign(info(req), { model: r.model, tokens: r.tokens, reused: r.reused, error: r.error });
    return reply
      .code(r.status)
      .header('content-type', 'application/json; charset=utf-8')
      .send(Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength));
  };

  const handle = (endpoint: Endpoint) => async (req: FastifyRequest, reply: FastifyReply) => {
    const body = req.body;
    if (pool && body instanceof RawBody) {
      const raw = body.bytes;
      const route = routeKey(raw);
      return send(req, reply, await pool.run({ kind: 'http', method: endpoint.method, path: endpoint.path, raw }, route.key, route.preferKey));
    }
    const { session_id: sessionId, chat_template: template } = (body ?? {}) as { session_id?: unknown; chat_template?: unknown };
    // A request's own template may not end: it runs on a thread, under the job time limit.
    if (pool && (typeof sessionId === 'string' || typeof template === 'string')) {
      return send(
        req,
        reply,
        await pool.run({ kind: 'http', method: endpoint.method, path: endpoint.path, body }, typeof sessionId === 'string' ? sessionId : undefined),
      );
    }
    return send(req, reply, await execute(ctx, endpoint, { body }));
  };

  // The event loop's own stalls (what a large request must not cause), for GET /v1/stats.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  app.get('/v1/stats', async (req) => {
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const body = {
      event_loop_delay_ms: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max), samples: loopDelay.count },
      threads: pool?.size ?? 0,
      queued: pool?.queued ?? 0,
    };
    if ((req.query as { reset?: string }).reset !== undefined) loopDelay.reset();
    return body;
  });

  for (const e of ENDPOINTS) {
    app.route({ method: e.method, url: e.path, schema: e.schema ? { body: e.schema } : undefined, handler: handle(e) });
  }
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    const f = failureOf(new PromptencError('E_ROUTE_NOT_FOUND', `${req.method} ${path}: no such route`));
    info(req).error = { code: f.body.error.code, message: f.body.error.message };
    return reply.code(f.status).send(f.body);
  });
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const f = failureOf(fastifyFailure(err, opts.maxBody));
    info(req).error = { code: f.body.error.code, message: f.body.error.message, stack: f.status >= 500 ? err.stack : undefined };
    return reply.code(f.status).send(f.body);
  });
  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  // One line per request, errors included (so each error is logged once).
  app.addHook('onResponse', async (req, reply) => {
    const i = info(req);
    const entry: Record<string, unknown> = {
      time: new Date().toISOString(),
      req: req.id,
      method: req.method,
      path: req.url.split('?')[0],
      status: reply.statusCode,
      model: i.model ?? null,
      tokens: i.tokens ?? null,
      ms: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (i.reused !== undefined) entry.reused = i.reused;
    if (i.error) entry.error = i.error;
    log(JSON.stringify(entry));
  });

  await app.listen({ host: opts.host, port: opts.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    port,
    models,
    async close() {
      // Stops accepting, lets in-flight requests finish, then stops the threads. A keep-alive
      // connection whose request finishes after close() began would hold it open: idle ones are
      // closed again every 100 ms until the server is down.
      const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
      await app.close();
      clearInterval(sweep);
      loopDelay.disable();
      await pool?.close();
      ctx.sessions?.close();
    },
  };
}
