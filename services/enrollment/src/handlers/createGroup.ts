import { randomUUID } from 'node:crypto';
import { utilityOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toApiGroup } from '../domain/group.ts';
import { ownProgram } from '../domain/enrollmentRules.ts';

/** `POST {utility_base_url}/v1/programs/{programId}/groups` `{id?, name}`: the id is the utility's or a new UUID. */
export const createGroup = (ctx: Pick<EnrollmentContext, 'knex' | 'readModels' | 'groups' | 'writer' | 'clock'>) =>
  implement(EnrollmentOperations.createGroup, async ({ params, body, principal }) => {
    const utilityId = utilityOf(principal);
    const program = ownProgram(await ctx.readModels.getProgram(ctx.knex, params.programId), utilityId, params.programId);
    const now = ctx.clock();
    const group = { program_id: program.id, id: body.id ?? randomUUID(), utility_id: utilityId, name: body.name, created_at: now, updated_at: now };
    const inserted = await ctx.knex.transaction(async (trx) => {
      const ok = await ctx.groups.insert(trx, group);
      if (ok) await ctx.writer.announceGroup(trx, group);
      return ok;
    });
    if (!inserted) throw Errors.CONFLICT(`Program ${program.id} has a group ${group.id} already`, { errors: [{ message: 'Already exists', path: 'id' }] });
    return toApiGroup(group);
  });
