import { randomUUID } from 'node:crypto';
import { ProgramGroupCreate, ProgramGroupsParams } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { utilityScope } from '../principals.ts';
import { toApiGroup } from './groupView.ts';
import { ownProgram } from './listEnrollments.ts';

/** `POST {utility_base_url}/v1/programs/{programId}/groups` `{id?, name}`: the id is the utility's or a new UUID. */
export const createGroup = (ctx: EnrollmentContext) =>
  operation({
    params: ProgramGroupsParams,
    body: ProgramGroupCreate,
    async handle({ params, body, principal }) {
      const utilityId = utilityScope(principal);
      const program = await ownProgram(ctx, utilityId, params.programId);
      const now = ctx.clock();
      const group = { program_id: program.id, id: body.id ?? randomUUID(), utility_id: utilityId, name: body.name, created_at: now, updated_at: now };
      const inserted = await ctx.knex.transaction((trx) => ctx.groups.insert(trx, group));
      if (!inserted) throw new AppError('CONFLICT', `Program ${program.id} has a group ${group.id} already`, { errors: [{ message: 'Already exists', path: 'id' }] });
      return { body: toApiGroup(group) };
    },
  });
