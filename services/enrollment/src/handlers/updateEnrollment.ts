import { utilityOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toUtilityEnrollment } from '../domain/enrollment.ts';
import { utilityTrigger } from '../domain/lifecycle.ts';

/**
 * `PATCH {utility_base_url}/v1/enrollments/{id}` `{status?, status_reason?, group_ids?}`: the
 * utility approves (ACTIVE), rejects (REJECTED), asks for more (NEEDS_ACTION) or ends
 * (UNENROLLED) an enrollment, and/or sets its groups. Decided on the locked row; repeating the
 * current status changes nothing.
 */
export const updateEnrollment = (ctx: Pick<EnrollmentContext, 'knex' | 'store' | 'groups' | 'writer'>) =>
  implement(EnrollmentOperations.updateEnrollment, async ({ params, body, principal }) => {
    const utilityId = utilityOf(principal);
    const trigger = body.status === undefined ? undefined : utilityTrigger(body.status, body.status_reason);
    const enrollment = await ctx.knex.transaction(async (trx) => {
      const e = await ctx.store.findForUtility(trx, utilityId, params.id, { forUpdate: true });
      if (!e) throw Errors.NOT_FOUND(`Enrollment ${params.id} not found`);
      if (body.group_ids !== undefined) {
        const known = new Set(await ctx.groups.existing(trx, e.program_id, body.group_ids));
        const unknown = body.group_ids.map((g, i) => ({ g, i })).filter(({ g }) => !known.has(g));
        if (unknown.length > 0) {
          throw Errors.VALIDATION_ERROR(`Invalid body: group_ids: ${unknown.map((u) => u.g).join(', ')} is not a group of program ${e.program_id}`, {
            detail: unknown.map((u) => ({ loc: ['body', 'group_ids', String(u.i)], msg: 'Not a group of the program', type: 'not_found' })),
            errors: unknown.map((u) => ({ message: 'Not a group of the program', path: `group_ids/${u.i}` })),
          });
        }
      }
      let current = trigger ? (await ctx.writer.apply(trx, e, trigger, { kind: 'UTILITY', id: utilityId })).enrollment : e;
      if (body.group_ids !== undefined) current = await ctx.writer.setGroups(trx, current, body.group_ids);
      return current;
    });
    return toUtilityEnrollment(enrollment);
  });
