import { integratorOf, internalPrincipal } from '@efs/access';
import { CatalogOperations, CommissioningOperations, EnrollmentOperations, eligibleProgramsFor, type DeviceCreateInType, type EnrollmentType, type EligibleProgramsRequestType, type ProgramType } from '@efs/api';
import { siteKey, zipArea } from '@efs/contracts';
import { Errors } from '@efs/errors';
import { call, implement } from '@efs/messaging';
import type { CommissioningContext } from '../context.ts';
import { autoEnrollChoice } from '../domain/autoEnroll.ts';
import { toDeviceMessage, type Device } from '../domain/device.ts';
import { toSiteMessage, type Site } from '../domain/site.ts';

type CommissionDeps = Pick<CommissioningContext, 'writer' | 'programs' | 'transport' | 'config' | 'logger'>;

/**
 * The catalog's programs for a zip code and devices, by the catalog's rules (libs/api's
 * programRules): from the read model of the programs topic when it is up to date as of now (every
 * program change the catalog has answered is in it), else asked of the catalog. Without either
 * answer nothing is stored: the caller gets 503 and may simply retry.
 */
async function eligiblePrograms(deps: CommissionDeps, integratorId: string, zipCode: string | null, devices: readonly Pick<DeviceCreateInType, 'type' | 'attributes'>[]): Promise<ProgramType[]> {
  if (!zipCode) return [];
  if (await deps.programs.upToDate()) return eligibleProgramsFor(deps.programs.covering(zipArea(zipCode)), zipCode, devices);
  const body: EligibleProgramsRequestType = { zip_code: zipCode, devices: devices.map((d) => ({ type: d.type, attributes: { ...d.attributes } })) };
  try {
    return await call(deps.transport, CatalogOperations.eligiblePrograms, { principal: internalPrincipal(integratorId), body }, { timeoutMs: deps.config.COMMISSIONING_CATALOG_TIMEOUT_MS });
  } catch (err) {
    deps.logger.warn({ err }, 'the catalog did not answer eligiblePrograms');
    throw Errors.SERVICE_UNAVAILABLE('The program catalog did not answer; nothing was stored', { cause: err });
  }
}

/**
 * Asks enrollment for an AUTO_ENROLL enrollment when the homeowner agreed and a program permits
 * it. The site is commissioned already: a refusal or silence is logged and the answer simply
 * carries no enrollment (the user can still enroll later).
 */
async function autoEnroll(deps: CommissionDeps, site: Site, devices: readonly Device[], programs: readonly ProgramType[], requested: boolean): Promise<EnrollmentType | undefined> {
  const choice = autoEnrollChoice(requested, programs, devices);
  if (!choice) return undefined;
  const body = { site: toSiteMessage(site), devices: choice.devices.map((d) => toDeviceMessage(d)), program_id: choice.programId };
  try {
    const principal = internalPrincipal(site.integrator_id, site.id);
    return await call(deps.transport, EnrollmentOperations.autoEnroll, { principal, body }, { timeoutMs: deps.config.COMMISSIONING_ENROLLMENT_TIMEOUT_MS, key: siteKey(site.integrator_id, site.id) });
  } catch (err) {
    deps.logger.warn({ err, site_id: site.id, program_id: choice.programId }, 'auto-enrollment refused or failed; commissioned without it');
    return undefined;
  }
}

/**
 * `POST /v1/commission` (client token): creates the site and its devices, answers the programs
 * they are eligible for and, when the homeowner agreed and a program permits it, the new
 * auto-enrollment. A failure stores nothing. The catalog is asked before anything is stored;
 * service calls never run inside the write's transaction (embedded mode shares one connection).
 */
export const commission = (deps: CommissionDeps) =>
  implement(CommissioningOperations.commission, async ({ body, principal }) => {
    const integratorId = integratorOf(principal);
    const programs = await eligiblePrograms(deps, integratorId, body.site.zip_code ?? null, body.devices);
    const { site, devices } = await deps.writer.createSite(integratorId, body.site, body.devices);
    const enrollment = await autoEnroll(deps, site, devices, programs, body.can_auto_enroll);
    return enrollment ? { programs, enrollment } : { programs };
  });
