import { utilityOf } from '@efs/access';
import { randomUUID } from 'node:crypto';
import { DispatchOperations } from '@efs/api';
import { processOnce } from '@efs/db';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { normalizeActions, spanOf } from '../domain/actions.ts';
import { toApiEvent, type DrEvent } from '../domain/event.ts';
import { nextTransitionAt, statusAt } from '../domain/eventStatus.ts';
import { resolveTargets, targetIdsOf } from '../domain/targets.ts';
import { ownProgram } from './lookups.ts';

/**
 * `POST {utility_base_url}/v1/events`: checked in order (body 400, actions ending in the past 400,
 * program 404, targets 404 / 409 ambiguous / 409 no ACTIVE enrollment), then stored and announced
 * (event.created). An event reaching few devices gets its commands in the same transaction; a
 * larger one from the consumer of its announcement, moments later. A redelivered request answers
 * the event it created.
 */
export const createEvent = (ctx: Pick<DispatchContext, 'knex' | 'schema' | 'readModels' | 'events' | 'eventWriter' | 'fanOut' | 'clock' | 'inlineFanOutMax'>) =>
  implement(DispatchOperations.createEvent, async ({ body, principal, meta }) => {
    const utilityId = utilityOf(principal);
    const now = ctx.clock();
    const actions = normalizeActions(body.actions, now);
    const program = await ownProgram(ctx, utilityId, body.program_id);
    const targetIds = targetIdsOf(body.target_type, body.target_ids, program.id);
    const { result } = await processOnce(ctx.knex, ctx.schema, DispatchOperations.createEvent.name, meta.id, async (trx) => {
      const facts = await ctx.readModels.targetFacts(trx, program.id, body.target_type, targetIds);
      const resolved = resolveTargets(body.target_type, targetIds, facts);
      const reach = [...facts.values()].reduce((n, f) => n + f.activeDevices, 0);
      const span = spanOf(actions);
      const status = statusAt({ ...span, canceled_at: null }, now);
      const e: DrEvent = {
        id: randomUUID(),
        utility_id: utilityId,
        program_id: program.id,
        target_type: body.target_type,
        target_ids: targetIds,
        resolved_targets: body.target_type === 'SITE' || body.target_type === 'DEVICE' ? resolved : null,
        actions,
        minimum_reserve_percentage: program.minimum_reserve_percentage,
        starts_at: span.starts_at,
        ends_at: span.ends_at,
        status,
        next_transition_at: nextTransitionAt(status, span),
        canceled_at: null,
        commands_created_at: null,
        commands_announced_at: null,
        created_at: now,
        updated_at: now,
      };
      await ctx.eventWriter.create(trx, e);
      if (reach <= ctx.inlineFanOutMax) await ctx.fanOut.runLocked(trx, e);
      return { id: e.id };
    });
    const e = await ctx.events.find(ctx.knex, result.id);
    if (!e) throw Errors.INTERNAL_ERROR('the event vanished');
    return toApiEvent(e, ctx.clock());
  });
