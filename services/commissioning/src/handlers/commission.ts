import { CommissionRequest } from '@efs/api';
import { operation } from '@efs/messaging';
import type { Commissioner } from '../commissioner.ts';
import { integratorOf } from '../domain/access.ts';

/**
 * `POST /v1/commission` (client token): creates the site and its devices, answers the programs
 * they are eligible for and, when the homeowner agreed and a program permits it, the new
 * auto-enrollment. A failure stores nothing.
 */
export const commission = (c: Commissioner) =>
  operation({
    body: CommissionRequest,
    async handle({ body, principal }) {
      const integratorId = integratorOf(principal);
      const programs = await c.eligiblePrograms(integratorId, body.site.zip_code ?? null, body.devices);
      const { site, devices } = await c.createSite(integratorId, body.site, body.devices);
      const enrollment = await c.autoEnroll(site, devices, programs, body.can_auto_enroll);
      return { body: enrollment ? { programs, enrollment } : { programs } };
    },
  });
