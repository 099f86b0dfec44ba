import { integratorOf } from '@efs/access';
import { DispatchOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { DispatchContext } from '../context.ts';
import { toApiCommand } from '../domain/command.ts';

/**
 * `PATCH /v1/command/{id}` (alias `/v1/commands/{id}`, client token): the device cloud says
 * whether the command is scheduled on the device (OK) or why not (FAILED_OFFLINE, FAILED_FAULT).
 * Answers the command as it now is; repeating the same acknowledgement changes nothing.
 */
export const acknowledgeCommand = (ctx: Pick<DispatchContext, 'knex' | 'commands' | 'commandWriter' | 'metrics' | 'clock'>) =>
  implement(DispatchOperations.acknowledgeCommand, async ({ params, body, principal }) => {
    const integratorId = integratorOf(principal);
    const { command, before } = await ctx.knex.transaction(async (trx) => {
      const c = await ctx.commands.find(trx, params.commandId, { integratorId }, { forUpdate: true });
      if (!c) throw Errors.NOT_FOUND(`Command ${params.commandId} not found`);
      const reason = body.device_status_reason ?? null;
      if (c.device_status === body.device_status && c.device_status_reason === reason) return { command: c, before: c };
      const next = { ...c, device_status: body.device_status, device_status_reason: reason, updated_at: ctx.clock() };
      await ctx.commandWriter.update(trx, [next]);
      return { command: next, before: c };
    });
    if (command.device_status !== before.device_status) ctx.metrics.acknowledged(before.device_status, command.device_status, command.updated_at.getTime() - command.created_at.getTime());
    return toApiCommand(command);
  });
