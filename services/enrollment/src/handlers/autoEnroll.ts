import { randomUUID } from 'node:crypto';
import { internalIntegratorOf } from '@efs/access';
import { EnrollmentOperations } from '@efs/api';
import { processOnce } from '@efs/db';
import { Errors } from '@efs/errors';
import { implement } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { newEnrollment, toApiEnrollment } from '../domain/enrollment.ts';
import { coversSite, duplicateEnrollment, termsAgreedBeforehand } from '../domain/enrollmentRules.ts';
import { DeviceAlreadyEnrolledError } from '../store/enrollmentStore.ts';

// The name its idempotency records are kept under (rows written before the operation was renamed).
const CONSUMER = 'enrollments.autoEnroll';

/**
 * autoEnroll (SYSTEM, from commissioning when `can_auto_enroll` is true): a
 * PENDING AUTO_ENROLL enrollment of the site's eligible devices in a program that permits it.
 * The body refreshes the read models first (commissioning just wrote it). Idempotent: a
 * redelivered request (same message id) answers the enrollment it created; a repeated one whose
 * devices are already held by an AUTO_ENROLL enrollment of the program answers that one.
 * Failures answer the error body and create nothing: 422 SITE_INFO_INCOMPLETE / NOT_ELIGIBLE,
 * 404 unknown program, 409 devices enrolled otherwise.
 */
export const autoEnroll = (ctx: Pick<EnrollmentContext, 'knex' | 'schema' | 'readModels' | 'store' | 'writer' | 'clock'>) =>
  implement(EnrollmentOperations.autoEnroll, async ({ body, principal, meta }) => {
    const integratorId = internalIntegratorOf(principal);
    if (body.site.integrator_id !== integratorId) throw Errors.FORBIDDEN('The site belongs to another integrator');
    const siteId = body.site.id;
    const { result } = await processOnce(ctx.knex, ctx.schema, CONSUMER, meta.id, async (trx) => {
      await ctx.readModels.upsertSite(trx, body.site);
      for (const d of body.devices) {
        if (d.integrator_id !== integratorId || d.site_id !== siteId) throw Errors.VALIDATION_ERROR(`Device ${d.id} is not a device of site ${siteId}`);
        await ctx.readModels.upsertDevice(trx, d);
      }
      const program = await ctx.readModels.getProgram(trx, body.program_id);
      if (!program) throw Errors.NOT_FOUND(`Program ${body.program_id} not found`);
      if (!program.can_auto_enroll) throw Errors.NOT_ELIGIBLE(`Program ${program.id} does not permit auto-enrollment`);
      const site = await ctx.readModels.getSite(trx, integratorId, siteId);
      if (!site) throw Errors.NOT_FOUND(`Site ${siteId} not found`);
      // No site-info check here: the specification conditions auto-enrollment only on the program
      // permitting it and the homeowner's prior agreement; missing information is collected later.
      if (!coversSite(program, site)) throw Errors.NOT_ELIGIBLE(`Program ${program.id} is not available for zip code ${site.zip_code ?? '(none)'}`);
      const known = await ctx.readModels.getDevices(trx, integratorId, siteId, body.devices.map((d) => d.id));
      const eligible = known.filter((d) => program.eligible_device_types.includes(d.type)).map((d) => d.id);
      if (eligible.length === 0) throw Errors.NOT_ELIGIBLE(`No device of site ${siteId} is eligible for program ${program.id}`);

      const held = await ctx.store.openHolding(trx, integratorId, siteId, program.id, eligible);
      const free = eligible.filter((id) => !held.some((h) => h.device_id === id));
      if (free.length === 0) {
        // A repeat: the devices are already in an auto-enrollment of this program.
        const holders = [...new Set(held.map((h) => h.enrollment_id))];
        const existing = holders.length === 1 ? await ctx.store.findById(trx, holders[0]!) : undefined;
        if (existing && existing.enroll_method === 'AUTO_ENROLL') return { enrollment_id: existing.id };
        throw duplicateEnrollment(eligible, program.id);
      }
      const enrollment = newEnrollment({
        id: randomUUID(),
        integratorId,
        siteId,
        program,
        deviceIds: free,
        method: 'AUTO_ENROLL',
        attributes: [],
        terms: termsAgreedBeforehand(program),
        now: ctx.clock(),
      });
      try {
        await ctx.writer.create(trx, enrollment, { kind: 'INTEGRATOR', id: integratorId }, 'Enrolled automatically at commissioning');
      } catch (err) {
        if (err instanceof DeviceAlreadyEnrolledError) throw duplicateEnrollment(free, program.id);
        throw err;
      }
      return { enrollment_id: enrollment.id };
    });
    const enrollment = await ctx.store.findById(ctx.knex, result.enrollment_id);
    if (!enrollment) throw Errors.INTERNAL_ERROR('auto-enrollment vanished');
    return toApiEnrollment(enrollment);
  });
