import { randomUUID } from 'node:crypto';
import { EnrollmentCreate, SiteEnrollmentsParams } from '@efs/api';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toApiEnrollment, type Enrollment } from '../domain/enrollment.ts';
import { assertDevicesOfSite, assertEligible, assertSiteComplete, checkFormAnswers, missingSiteFields, termsOf } from '../domain/enrollmentRules.ts';
import { autoApproveAt } from '../domain/lifecycle.ts';
import type { DeviceView, SiteView } from '../domain/readModels.ts';
import { siteScope } from '../principals.ts';
import { DeviceAlreadyEnrolledError } from '../store/enrollmentStore.ts';

export const duplicateEnrollment = (deviceIds: readonly string[], programId: string) =>
  new AppError('CONFLICT', `Device ${deviceIds.join(', ')} is already enrolled (PENDING, NEEDS_ACTION or ACTIVE) in program ${programId}`, {
    errors: deviceIds.map((id) => ({ message: 'Already enrolled in this program', path: `device_ids/${id}` })),
  });

/**
 * The site and the named devices as enrollment sees them; when the read model lags (site
 * missing or incomplete, a device missing) commissioning is asked first.
 */
export async function loadSiteAndDevices(ctx: EnrollmentContext, integratorId: string, siteId: string, deviceIds: readonly string[]): Promise<{ site: SiteView; devices: DeviceView[] }> {
  let site = await ctx.readModels.getSite(ctx.knex, integratorId, siteId);
  let devices = await ctx.readModels.getDevices(ctx.knex, integratorId, siteId, deviceIds);
  if (!site || missingSiteFields(site).length > 0 || devices.length < deviceIds.length) {
    const outcome = await ctx.lookup.refresh(integratorId, siteId, { devices: devices.length < deviceIds.length });
    site = await ctx.readModels.getSite(ctx.knex, integratorId, siteId);
    devices = await ctx.readModels.getDevices(ctx.knex, integratorId, siteId, deviceIds);
    if (!site && outcome === 'unavailable') throw new AppError('SERVICE_UNAVAILABLE', 'Site information is not available right now; retry later');
  }
  if (!site) throw new AppError('NOT_FOUND', `Site ${siteId} not found`);
  return { site, devices };
}

/** `POST /v1/site/{siteId}/enrollments`: the checks of decisions.md in their order, then a PENDING enrollment. */
export const createEnrollment = (ctx: EnrollmentContext) =>
  operation({
    params: SiteEnrollmentsParams,
    body: EnrollmentCreate,
    async handle({ params, body, principal }) {
      const integratorId = siteScope(principal, params.siteId);
      const deviceIds = [...new Set(body.device_ids)];
      const { site, devices } = await loadSiteAndDevices(ctx, integratorId, params.siteId, deviceIds);
      assertSiteComplete(site);
      const program = await ctx.readModels.getProgram(ctx.knex, body.program_id);
      if (!program) throw new AppError('NOT_FOUND', `Program ${body.program_id} not found`);
      assertEligible(program, site, devices);
      assertDevicesOfSite(deviceIds, devices, params.siteId);
      const terms = termsOf(program, body.has_agreed_to_terms_and_conditions, body.terms_and_conditions_version);
      const attributes = checkFormAnswers(program, body.program_specific_attributes ?? []);
      const held = await ctx.store.openHolding(ctx.knex, integratorId, params.siteId, program.id, deviceIds);
      if (held.length > 0) throw duplicateEnrollment(held.map((h) => h.device_id), program.id);

      const now = ctx.clock();
      const enrollment: Enrollment = {
        id: randomUUID(),
        integrator_id: integratorId,
        utility_id: program.utility_id,
        site_id: params.siteId,
        program_id: program.id,
        device_ids: deviceIds,
        enroll_method: 'USER_ACTION',
        status: 'PENDING',
        status_reason: null,
        enrolled_at: null,
        unenrolled_at: null,
        program_specific_attributes: attributes,
        ...terms,
        group_ids: [],
        auto_approve_at: autoApproveAt(program.auto_approve_after_ms, now),
        status_changed_at: now,
        created_at: now,
        updated_at: now,
      };
      try {
        // The unique index on open enrollment devices settles a race the check above lost.
        await ctx.knex.transaction((trx) => ctx.writer.create(trx, enrollment, { kind: 'USER', id: params.siteId }, 'Enrolled by the user'));
      } catch (err) {
        if (err instanceof DeviceAlreadyEnrolledError) throw duplicateEnrollment(deviceIds, program.id);
        throw err;
      }
      return { body: toApiEnrollment(enrollment) };
    },
  });
