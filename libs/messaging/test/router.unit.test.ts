import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperations, Headers, requestDeadline, type RequestMessage } from '@efs/contracts';
import { createLogger } from '@efs/logging';
import { bindHandlers, implement, JsonReply, operationRouter, type MessageMeta } from '@efs/messaging';

const Ops = defineOperations('catalog', { ping: { response: z.object({ deadline: z.number().nullable() }), errors: [] } });
const logger = createLogger({ name: 'test', level: 'silent' });
const request: RequestMessage = { op: 'ping', principal: { kind: 'SYSTEM', integrator_id: null, utility_id: null, site_id: null, token_id: null }, params: {}, query: {}, body: null };
const meta = (deadline?: number): MessageMeta => ({ id: 'm1', topic: 't', key: null, headers: deadline === undefined ? {} : { [Headers.deadline]: String(deadline) }, partition: 0, offset: '0' });

describe('operation router and request deadlines', () => {
  it('answers a request past its deadline 503 without running its handler', async () => {
    let ran = 0;
    const route = operationRouter(Ops, { ping: implement(Ops.ping, async () => (ran++, { deadline: null })) }, logger);
    const reply = await route(request, meta(Date.now() - 1));
    expect(reply.status).toBe(503);
    expect(JSON.parse(reply.body!)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status_code: 503 });
    expect(ran).toBe(0);
  });

  it('runs a handler in time with the request deadline as the current one, and without one outside a request', async () => {
    const route = operationRouter(Ops, { ping: implement(Ops.ping, async () => ({ deadline: requestDeadline() ?? null })) }, logger);
    const deadline = Date.now() + 5000;
    expect(JSON.parse((await route(request, meta(deadline))).body!)).toEqual({ deadline });
    expect(JSON.parse((await route(request, meta())).body!)).toEqual({ deadline: null });
  });

  it('answers a body serialized ahead of time with its text, as the same body returned would be', async () => {
    const kept = JsonReply.of(Ops.ping, { deadline: 42 });
    const route = operationRouter(Ops, { ping: implement(Ops.ping, async () => kept) }, logger);
    const plain = operationRouter(Ops, { ping: implement(Ops.ping, async () => ({ deadline: 42 })) }, logger);
    expect(await route(request, meta())).toEqual({ status: 200, body: '{"deadline":42}' });
    expect(await route(request, meta())).toEqual(await plain(request, meta()));
    // An array answer joined from its elements' texts reads as the array would.
    expect(JSON.parse(JsonReply.ofElements(Ops.ping, ['{"a":1}', '"b"']).json)).toEqual([{ a: 1 }, 'b']);
    expect(JsonReply.ofElements(Ops.ping, []).json).toBe('[]');
  });

  it('serves the handlers bound to a context, each built from the context it was given', async () => {
    const seen: unknown[] = [];
    const ctx = { deadline: 7, unused: 'x' };
    const ping = ({ deadline }: Pick<typeof ctx, 'deadline'>) => implement(Ops.ping, async () => ({ deadline }));
    const route = operationRouter(Ops, bindHandlers(Ops, ctx, { ping: (c) => (seen.push(c), ping(c)) }), logger);
    expect(seen).toEqual([ctx]);
    expect(JSON.parse((await route(request, meta())).body!)).toEqual({ deadline: 7 });
  });
});
