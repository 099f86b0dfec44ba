import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { DeviceType } from '@efs/api';
import { processOnce } from '@efs/db';
import { AppError } from '@efs/errors';
import { operation } from '@efs/messaging';
import type { EnrollmentContext } from '../context.ts';
import { toApiEnrollment, type Enrollment } from '../domain/enrollment.ts';
import { autoApproveAt } from '../domain/lifecycle.ts';
import { systemScope } from '../principals.ts';
import { DeviceAlreadyEnrolledError } from '../store/enrollmentStore.ts';
import { duplicateEnrollment } from './createEnrollment.ts';

const nullableString = z.string().nullable().default(null);

/** A SiteMessage (commissioning contract) as commissioning sends it. */
const SiteBody = z.object({
  integrator_id: z.string().min(1),
  id: z.string().min(1),
  first_name: nullableString,
  last_name: nullableString,
  company_name: nullableString,
  email: nullableString,
  state_code: nullableString,
  city: nullableString,
  zip_code: nullableString,
  street_address: nullableString,
  street_address2: nullableString,
  service_account_id: nullableString,
  created_at: z.string(),
  updated_at: z.string(),
  deleted: z.boolean().default(false),
});

/** A DeviceMessage (commissioning contract); what enrollment keeps of it. */
const DeviceBody = z.object({
  integrator_id: z.string().min(1),
  site_id: z.string().min(1),
  id: z.string().min(1),
  type: DeviceType,
  updated_at: z.string(),
  deleted: z.boolean().default(false),
});

/** Body of the internal `enrollments.autoEnroll` request commissioning sends. */
export const AutoEnrollRequest = z.object({
  site: SiteBody,
  devices: z.array(DeviceBody),
  program_id: z.string().min(1),
});

const CONSUMER = 'enrollments.autoEnroll';

/**
 * `enrollments.autoEnroll` (SYSTEM, from commissioning when `can_auto_enroll` is true): a
 * PENDING AUTO_ENROLL enrollment of the site's eligible devices in a program that permits it.
 * The body refreshes the read models first (commissioning just wrote it). Idempotent: a
 * redelivered request (same message id) answers the enrollment it created; a repeated one whose
 * devices are already held by an AUTO_ENROLL enrollment of the program answers that one.
 * Failures answer the error body and create nothing: 422 SITE_INFO_INCOMPLETE / NOT_ELIGIBLE,
 * 404 unknown program, 409 devices enrolled otherwise.
 */
export const autoEnroll = (ctx: EnrollmentContext) =>
  operation({
    body: AutoEnrollRequest,
    async handle({ body, principal, meta }) {
      const integratorId = systemScope(principal);
      if (body.site.integrator_id !== integratorId) throw new AppError('FORBIDDEN', 'The site belongs to another integrator');
      const siteId = body.site.id;
      const { result } = await processOnce(ctx.knex, ctx.schema, CONSUMER, meta.id, async (trx) => {
        await ctx.readModels.upsertSite(trx, body.site);
        for (const d of body.devices) {
          if (d.integrator_id !== integratorId || d.site_id !== siteId) throw new AppError('VALIDATION_ERROR', `Device ${d.id} is not a device of site ${siteId}`);
          await ctx.readModels.upsertDevice(trx, d);
        }
        const program = await ctx.readModels.getProgram(trx, body.program_id);
        if (!program) throw new AppError('NOT_FOUND', `Program ${body.program_id} not found`);
        if (!program.can_auto_enroll) throw new AppError('NOT_ELIGIBLE', `Program ${program.id} does not permit auto-enrollment`);
        const site = await ctx.readModels.getSite(trx, integratorId, siteId);
        if (!site) throw new AppError('NOT_FOUND', `Site ${siteId} not found`);
        // No site-info check here: the specification conditions auto-enrollment only on the program
        // permitting it and the homeowner's prior agreement; missing information is collected later.
        if (site.zip_code === null || !program.zip_codes.includes(site.zip_code)) throw new AppError('NOT_ELIGIBLE', `Program ${program.id} is not available for zip code ${site.zip_code ?? '(none)'}`);
        const known = await ctx.readModels.getDevices(trx, integratorId, siteId, body.devices.map((d) => d.id));
        const eligible = known.filter((d) => program.eligible_device_types.includes(d.type)).map((d) => d.id);
        if (eligible.length === 0) throw new AppError('NOT_ELIGIBLE', `No device of site ${siteId} is eligible for program ${program.id}`);

        const held = await ctx.store.openHolding(trx, integratorId, siteId, program.id, eligible);
        const free = eligible.filter((id) => !held.some((h) => h.device_id === id));
        if (free.length === 0) {
          // A repeat: the devices are already in an auto-enrollment of this program.
          const holders = [...new Set(held.map((h) => h.enrollment_id))];
          const existing = holders.length === 1 ? await ctx.store.findById(trx, holders[0]!) : undefined;
          if (existing && existing.enroll_method === 'AUTO_ENROLL') return { enrollment_id: existing.id };
          throw duplicateEnrollment(eligible, program.id);
        }
        const now = ctx.clock();
        const terms = program.terms_and_conditions_version === null ? { agreed: null, version: null } : { agreed: true, version: program.terms_and_conditions_version };
        const enrollment: Enrollment = {
          id: randomUUID(),
          integrator_id: integratorId,
          utility_id: program.utility_id,
          site_id: siteId,
          program_id: program.id,
          device_ids: free,
          enroll_method: 'AUTO_ENROLL',
          status: 'PENDING',
          status_reason: null,
          enrolled_at: null,
          unenrolled_at: null,
          program_specific_attributes: [],
          // The homeowner agreed beforehand (can_auto_enroll), which covers the current terms.
          has_agreed_to_terms_and_conditions: terms.agreed,
          terms_and_conditions_version: terms.version,
          group_ids: [],
          auto_approve_at: autoApproveAt(program.auto_approve_after_ms, now),
          status_changed_at: now,
          created_at: now,
          updated_at: now,
        };
        try {
          await ctx.writer.create(trx, enrollment, { kind: 'INTEGRATOR', id: integratorId }, 'Enrolled automatically at commissioning');
        } catch (err) {
          if (err instanceof DeviceAlreadyEnrolledError) throw duplicateEnrollment(free, program.id);
          throw err;
        }
        return { enrollment_id: enrollment.id };
      });
      const enrollment = await ctx.store.findById(ctx.knex, result.enrollment_id);
      if (!enrollment) throw new AppError('INTERNAL_ERROR', 'auto-enrollment vanished');
      return { body: toApiEnrollment(enrollment) };
    },
  });
