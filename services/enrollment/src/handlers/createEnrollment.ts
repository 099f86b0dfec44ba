import { randomUUID } from 'node:crypto';
import { siteIntegratorOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { newEnrollment, toApiEnrollment } from '../domain/enrollment.ts';
import { assertDevicesOfSite, assertEligible, assertSiteComplete, checkFormAnswers, duplicateEnrollment, termsOf } from '../domain/enrollmentRules.ts';
import { DeviceAlreadyEnrolledError } from '../store/enrollmentStore.ts';

/** `POST /v1/site/{siteId}/enrollments`: the checks of decisions.md in their order, then a PENDING enrollment. */
export const createEnrollment = (ctx: Pick<EnrollmentContext, 'knex' | 'readModels' | 'store' | 'writer' | 'sites' | 'clock'>) =>
  implement(EnrollmentOperations.createEnrollment, async ({ params, body, principal }) => {
    const integratorId = siteIntegratorOf(principal, params.siteId);
    const deviceIds = [...new Set(body.device_ids)];
    const { site, devices } = await ctx.sites.siteAndDevices(integratorId, params.siteId, deviceIds);
    assertSiteComplete(site);
    const program = await ctx.readModels.getProgram(ctx.knex, body.program_id);
    if (!program) throw Errors.NOT_FOUND(`Program ${body.program_id} not found`);
    assertEligible(program, site, devices);
    assertDevicesOfSite(deviceIds, devices, params.siteId);
    const terms = termsOf(program, body.has_agreed_to_terms_and_conditions, body.terms_and_conditions_version);
    const attributes = checkFormAnswers(program, body.program_specific_attributes ?? []);
    const held = await ctx.store.openHolding(ctx.knex, integratorId, params.siteId, program.id, deviceIds);
    if (held.length > 0) throw duplicateEnrollment(held.map((h) => h.device_id), program.id);

    const enrollment = newEnrollment({
      id: randomUUID(),
      integratorId,
      siteId: params.siteId,
      program,
      deviceIds,
      method: 'USER_ACTION',
      attributes,
      terms,
      now: ctx.clock(),
    });
    try {
      // The unique index on open enrollment devices settles a race the check above lost.
      await ctx.knex.transaction((trx) => ctx.writer.create(trx, enrollment, { kind: 'USER', id: params.siteId }, 'Enrolled by the user'));
    } catch (err) {
      if (err instanceof DeviceAlreadyEnrolledError) throw duplicateEnrollment(deviceIds, program.id);
      throw err;
    }
    return toApiEnrollment(enrollment);
  });
