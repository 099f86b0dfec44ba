import { z } from 'zod';
import { DateTime } from './common.ts';
import { Device, DeviceCreateIn } from './devices.ts';
import { Enrollment } from './enrollments.ts';
import { Program } from './programs.ts';
import { ExternalId, Site, SiteRecord } from './sites.ts';

/** Most devices one commissioning request takes. */
export const MAX_DEVICES_PER_REQUEST = 100;

/** Every device belongs to the site of the request, and no device id appears twice. */
function devicesMatchSite(v: { site: { id: string }; devices?: { id: string; site_id: string }[] | undefined }, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  (v.devices ?? []).forEach((d, i) => {
    if (d.site_id !== v.site.id) ctx.addIssue({ code: 'custom', path: ['devices', i, 'site_id'], message: `site_id must equal site.id (${v.site.id})` });
    if (seen.has(d.id)) ctx.addIssue({ code: 'custom', path: ['devices', i, 'id'], message: `Device id ${d.id} appears more than once` });
    seen.add(d.id);
  });
}

/** `POST /v1/commission` body. */
export const CommissionRequest = z
  .object({
    site: Site,
    devices: z.array(DeviceCreateIn).max(MAX_DEVICES_PER_REQUEST),
    can_auto_enroll: z.boolean().describe('True when the homeowner agreed beforehand to be enrolled automatically.'),
  })
  .superRefine(devicesMatchSite)
  .meta({ id: 'CommissionRequest' });
export type CommissionRequestType = z.infer<typeof CommissionRequest>;

/** `POST /v1/commission` answer: the programs the site's devices are eligible for, and the auto-enrollment if one was made. */
export const CommissionResponse = z
  .object({
    programs: z.array(Program),
    enrollment: Enrollment.optional().describe('Present only when an auto-enrollment was created; read-only.'),
  })
  .meta({ id: 'CommissionResponse' });
export type CommissionResponseType = z.infer<typeof CommissionResponse>;

/**
 * Internal operation ensureSite (used by `POST /v1/sessions`): commissions the site (as with
 * `can_auto_enroll` false) when it does not exist; an existing site is reused, so `site.id` alone
 * is enough: the site fields given are applied as a site update and devices not yet known are added.
 */
export const SiteEnsureRequest = z
  .object({ site: Site, devices: z.array(DeviceCreateIn).max(MAX_DEVICES_PER_REQUEST).optional() })
  .superRefine(devicesMatchSite);
export type SiteEnsureRequestType = z.infer<typeof SiteEnsureRequest>;

export const SiteEnsureResponse = z.object({ created: z.boolean(), site: SiteRecord, devices: z.array(Device) });
export type SiteEnsureResponseType = z.infer<typeof SiteEnsureResponse>;

/** Most named values one supplement carries. */
export const MAX_SUPPLEMENT_VALUES = 100;

/** `POST /v1/supplements` (client token): information a program asks for after commissioning. */
export const SupplementCreate = z
  .object({
    site_id: ExternalId,
    device_id: ExternalId.nullable().optional(),
    data: z
      .record(z.string().min(1).max(255), z.unknown())
      .refine((d) => Object.keys(d).length <= MAX_SUPPLEMENT_VALUES, `at most ${MAX_SUPPLEMENT_VALUES} named values`)
      .describe('Named values, e.g. {"utility_account_number": "123"}.'),
  })
  .meta({ id: 'SupplementCreate' });
export type SupplementCreateType = z.infer<typeof SupplementCreate>;

export const Supplement = z
  .object({
    id: z.uuid(),
    site_id: z.string(),
    device_id: z.string().nullable(),
    data: z.record(z.string(), z.unknown()),
    created_at: DateTime,
  })
  .meta({ id: 'Supplement' });
export type SupplementType = z.infer<typeof Supplement>;
