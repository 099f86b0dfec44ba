import { hash } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Principal, ReplyMessage } from '@efs/contracts';
import { Errors, validationError } from '@efs/errors';
import { sendError } from '@efs/http';
import type { Logger } from '@efs/logging';
import { meter } from '@efs/telemetry';
import { rawQuery } from '../forward.ts';
import { NEXT_CURSOR_HEADER } from '../handlers/telemetryPage.ts';
import type { KeyedRequest, KnexIdempotencyKeys, StoredAnswer } from '../idempotency/idempotencyKeys.ts';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Set on an answer replayed from an earlier request with the same key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

const IdempotencyKey = z
  .string()
  .regex(/^[\x20-\x7e]{1,255}$/, 'at most 255 printable ASCII characters')
  .describe(
    'Makes the request safe to retry: the same key with the same query and body, from the same credential, within 24 hours, answers exactly as the first request did without doing it again (header Idempotent-Replayed: true); the same key with another body, or while the first is still running, answers 409 CONFLICT.',
  );

/** The header of every POST and PATCH (validation and OpenAPI); other headers pass untouched. */
export const IdempotencyHeaders = z.looseObject({ [IDEMPOTENCY_KEY_HEADER]: IdempotencyKey.optional() });

/** Headers of an answer kept with it for a replay. */
const KEPT_HEADERS = ['content-type', 'cache-control', NEXT_CURSOR_HEADER];

interface HeldKey {
  keyed: KeyedRequest;
  claim: string;
  settled: boolean;
  /**
   * The service's answer still on its way after the caller got 503 (forward.ts): the key stays
   * held until it comes (then kept, or freed when it says nothing was done), so a retry never
   * runs the request a second time.
   */
  late?: Promise<ReplyMessage | undefined>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set while the request holds its Idempotency-Key. */
    idempotency?: HeldKey;
  }
}

/**
 * Who a key belongs to: a client token or utility key by its id, a site token or portal session
 * by its site (a new site token every hour must still find the key).
 */
function scopeOf(principal: Principal): string {
  if (principal.kind === 'SITE' || principal.kind === 'PORTAL_SESSION') return `${principal.kind}:${principal.integrator_id ?? ''}:${principal.site_id ?? ''}`;
  return `${principal.kind}:${principal.token_id ?? ''}:${principal.integrator_id ?? principal.utility_id ?? ''}`;
}

const fingerprintOf = (req: FastifyRequest): string => hash('sha256', JSON.stringify([rawQuery(req), req.body ?? null]), 'base64url');

/** Answers that are kept: what a request did (2xx) or refused (4xx). A 5xx did nothing and frees the key. */
const keeps = (status: number) => (status >= 200 && status < 300) || (status >= 400 && status < 500);

function replay(reply: FastifyReply, answer: StoredAnswer): FastifyReply {
  reply.code(answer.status).headers(answer.headers).header(IDEMPOTENT_REPLAYED_HEADER, 'true');
  return reply.send(answer.body);
}

/** A hook's request answered by what it sent. */
const answered = (_sent: FastifyReply): true => true;

const idempotency: FastifyPluginAsyncZod<{ keys: KnexIdempotencyKeys; logger: Logger; listener: string }> = async (app, { keys, logger, listener }) => {
  const log = logger.child({ component: 'idempotency' });
  const replays = meter().createCounter('efs.http.idempotency.replays', { description: 'Requests answered by replaying the answer kept for their Idempotency-Key', unit: '{request}' });
  const replayAttrs = { service: 'gateway', listener };
  app.decorateRequest('idempotency', undefined);

  // After authentication and validation: a refused or invalid request never takes a key.
  // Callback form: most requests carry no key and pass at once, without the promise an async
  // hook costs per request; a keyed one goes on once its key is claimed.
  app.addHook('preHandler', (req, reply, done) => {
    if ((req.method !== 'POST' && req.method !== 'PATCH') || req.headers[IDEMPOTENCY_KEY_HEADER] === undefined) return done();
    // Anonymous routes (the portal's link check and redemption) have no caller to scope a key to:
    // a key there would let one caller's answer replay to another, or a single-use token be
    // redeemed again by a replay. They run as if no key came.
    const principal = req.principal;
    if (!principal) return done();
    // Answered by the claim (a replay or a refusal), the request ends here: no `done`.
    claimKey(req, reply, principal).then((answered) => void (answered || done()), done);
  });

  /** Claims the request's key and holds it on the request (false), or answers the request (true): a replay, 409 or 400. */
  async function claimKey(req: FastifyRequest, reply: FastifyReply, principal: Principal): Promise<boolean> {
    const given = req.headers[IDEMPOTENCY_KEY_HEADER];
    const key = IdempotencyKey.safeParse(given);
    if (!key.success) return answered(sendError(reply, validationError(key.error.issues.map((i) => ({ ...i, path: [IDEMPOTENCY_KEY_HEADER] })), 'header')));
    const keyed: KeyedRequest = { scope: scopeOf(principal), method: req.method, path: req.url.split('?')[0] ?? '/', key: key.data, fingerprint: fingerprintOf(req) };
    const claim = await keys.claim(keyed);
    switch (claim.kind) {
      case 'claimed':
        req.idempotency = { keyed, claim: claim.claim, settled: false };
        return false;
      case 'replay':
        replays.add(1, replayAttrs);
        return answered(replay(reply, claim.answer));
      case 'mismatch':
        return answered(sendError(reply, Errors.CONFLICT.forField('This Idempotency-Key was used with another request body; use a new key for a new request', [IDEMPOTENCY_KEY_HEADER], 'header')));
      case 'in-flight':
        return answered(sendError(reply, Errors.CONFLICT.forField('A request with this Idempotency-Key is still in progress; retry later', [IDEMPOTENCY_KEY_HEADER], 'header'), { 'retry-after': '1' }));
    }
  }

  // The answer as sent is the one kept (or the key is freed) before the client sees it, so a
  // retry right after the answer finds it. Callback form, as above: a request without a key passes at once.
  app.addHook('onSend', (req, reply, payload, done) => {
    const held = req.idempotency;
    if (!held || held.settled) return done(null, payload);
    held.settled = true;
    settleKey(held, reply, payload).then(() => done(null, payload), done);
  });

  /** Keeps the answer for the key's retries, or frees the key; never fails the answer itself. */
  async function settleKey(held: NonNullable<FastifyRequest['idempotency']>, reply: FastifyReply, payload: unknown): Promise<void> {
    const status = reply.statusCode;
    try {
      if (keeps(status) && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
        const headers: Record<string, string> = {};
        for (const h of KEPT_HEADERS) {
          const v = reply.getHeader(h);
          if (v !== undefined) headers[h] = String(v);
        }
        await keys.record(held.keyed, held.claim, { status, body: payload.toString(), headers });
      } else if (held.late) {
        held.late
          .then(async (answer) => {
            if (answer && keeps(answer.status)) {
              await keys.record(held.keyed, held.claim, { status: answer.status, body: answer.body ?? '', headers: { 'content-type': 'application/json; charset=utf-8' } });
              log.info({ key_path: held.keyed.path, status: answer.status }, 'a late answer was kept for the retry of its key');
            } else await keys.release(held.keyed, held.claim);
          })
          .catch((err: Error) => log.error({ err }, 'a late answer could not be kept; the key frees itself when its lock ends'));
      } else {
        await keys.release(held.keyed, held.claim);
      }
    } catch (err) {
      log.error({ err }, 'idempotency key not updated; it frees itself when its lock ends');
    }
  }
};

/**
 * `Idempotency-Key` on every POST and PATCH of the listener (decisions.md, Errors): the first
 * request with a key claims it; its answer (2xx or 4xx) is kept and replayed to a retry with the
 * same key and body; another body, or a retry while the first is still running, answers 409
 * CONFLICT. Needs the principal the auth plugin sets.
 */
export const idempotencyPlugin = fp(idempotency, { name: 'efs-idempotency', dependencies: ['efs-auth'] });
