import { z } from 'zod';
import { Enrollment, Program, type DeviceCreateInType, type EnrollmentType, type EligibleProgramsRequestType, type ProgramType, type SiteType } from '@efs/api';
import { DevicesTopic, SitesTopic, deviceKey, siteKey, type Principal } from '@efs/contracts';
import type { Knex, Outbox } from '@efs/db';
import { AppError } from '@efs/errors';
import type { Logger } from '@efs/logging';
import { ServiceUnavailableError, type Transport } from '@efs/messaging';
import type { CommissioningConfig } from './config.ts';
import { autoEnrollChoice } from './domain/autoEnroll.ts';
import { newDevice, toDeviceMessage, type Device } from './domain/device.ts';
import { newSite, toSiteMessage, type Site } from './domain/site.ts';
import { isUniqueViolation, type CommissioningStore } from './store/commissioningStore.ts';

const systemPrincipal = (integratorId: string, siteId: string | null = null): Principal => ({ kind: 'SYSTEM', integrator_id: integratorId, utility_id: null, site_id: siteId, token_id: null });

/** 409 naming the field whose id is taken. */
export function conflict(message: string, path: (string | number)[]): AppError {
  return new AppError('CONFLICT', message, {
    detail: [{ loc: ['body', ...path.map(String)], msg: message, type: 'conflict' }],
    errors: [{ message, path: path.join('/') }],
  });
}

/**
 * What commissioning does beyond single-row reads: asks the catalog which programs fit, writes a
 * site with its devices and their announcements in one transaction, and asks enrollment for an
 * auto-enrollment. Service calls never run inside a transaction (embedded mode shares one connection).
 */
export class Commissioner {
  private readonly knex: Knex;
  private readonly store: CommissioningStore;
  private readonly outbox: Outbox;
  private readonly transport: Transport;
  private readonly config: CommissioningConfig;
  private readonly logger: Logger;

  constructor(opts: { knex: Knex; store: CommissioningStore; outbox: Outbox; transport: Transport; config: CommissioningConfig; logger: Logger }) {
    this.knex = opts.knex;
    this.store = opts.store;
    this.outbox = opts.outbox;
    this.transport = opts.transport;
    this.config = opts.config;
    this.logger = opts.logger;
  }

  /**
   * The catalog's programs for a zip code and devices (the catalog owns eligibility and earnings).
   * Without its answer nothing is stored: the caller gets 503 and may simply retry.
   */
  async eligiblePrograms(integratorId: string, zipCode: string | null, devices: readonly Pick<DeviceCreateInType, 'type' | 'attributes'>[]): Promise<ProgramType[]> {
    const body: EligibleProgramsRequestType = { zip_code: zipCode, devices: devices.map((d) => ({ type: d.type, attributes: { ...d.attributes } })) };
    let reply;
    try {
      reply = await this.transport.request(
        'catalog',
        { op: 'programs.eligible', principal: systemPrincipal(integratorId), params: {}, query: {}, body: JSON.stringify(body) },
        { timeoutMs: this.config.COMMISSIONING_CATALOG_TIMEOUT_MS },
      );
    } catch (err) {
      if (err instanceof ServiceUnavailableError) throw new AppError('SERVICE_UNAVAILABLE', 'The program catalog did not answer; nothing was stored', { cause: err });
      throw err;
    }
    if (reply.status !== 200) {
      this.logger.warn({ status: reply.status }, 'catalog refused programs.eligible');
      throw new AppError('SERVICE_UNAVAILABLE', 'The program catalog did not answer; nothing was stored');
    }
    return z.array(Program).parse(JSON.parse(reply.body ?? '[]'));
  }

  /** Creates a site and its devices with their announcements, all or nothing; 409 when an id is taken. */
  async createSite(integratorId: string, input: SiteType, deviceInputs: readonly DeviceCreateInType[]): Promise<{ site: Site; devices: Device[] }> {
    const now = new Date();
    const site = newSite(integratorId, input, now);
    const devices = deviceInputs.map((d) => newDevice(integratorId, d.id, d, now));
    try {
      await this.knex.transaction(async (trx) => {
        if (await this.store.getSite(integratorId, site.id, trx)) throw conflict(`Site ${site.id} exists already`, ['site', 'id']);
        const taken = new Set(await this.store.existingDeviceIds(trx, integratorId, devices.map((d) => d.id)));
        const i = devices.findIndex((d) => taken.has(d.id));
        if (i >= 0) throw conflict(`Device ${devices[i]!.id} exists already`, ['devices', i, 'id']);
        await this.store.insertSite(trx, site);
        await this.outbox.enqueue(trx, SitesTopic, siteKey(integratorId, site.id), toSiteMessage(site));
        for (const d of devices) {
          await this.store.insertDevice(trx, d);
          await this.outbox.enqueue(trx, DevicesTopic, deviceKey(integratorId, site.id, d.id), toDeviceMessage(d));
        }
      });
    } catch (err) {
      // Another request inserted the same id between our check and our insert.
      if (isUniqueViolation(err)) throw conflict('The site or one of its devices exists already', ['site', 'id']);
      throw err;
    }
    return { site, devices };
  }

  /**
   * Asks enrollment for an AUTO_ENROLL enrollment when the homeowner agreed and a program permits
   * it. The site is commissioned already: a refusal or silence is logged and the answer simply
   * carries no enrollment (the user can still enroll later).
   */
  async autoEnroll(site: Site, devices: readonly Device[], programs: readonly ProgramType[], requested: boolean): Promise<EnrollmentType | undefined> {
    const choice = autoEnrollChoice(requested, programs, devices);
    if (!choice) return undefined;
    const log = this.logger.child({ site_id: site.id, program_id: choice.programId });
    const body = JSON.stringify({ site: toSiteMessage(site), devices: choice.devices.map((d) => toDeviceMessage(d)), program_id: choice.programId });
    try {
      const reply = await this.transport.request(
        'enrollment',
        { op: 'enrollments.autoEnroll', principal: systemPrincipal(site.integrator_id, site.id), params: {}, query: {}, body },
        { timeoutMs: this.config.COMMISSIONING_ENROLLMENT_TIMEOUT_MS, key: site.id },
      );
      if (reply.status !== 200) {
        log.warn({ status: reply.status, reply: reply.body?.slice(0, 500) }, 'auto-enrollment refused; commissioned without it');
        return undefined;
      }
      const parsed = Enrollment.safeParse(JSON.parse(reply.body ?? 'null'));
      if (!parsed.success) {
        log.error({ issues: parsed.error.issues }, 'auto-enrollment reply is not an Enrollment; commissioned without it');
        return undefined;
      }
      return parsed.data;
    } catch (err) {
      log.warn({ err }, 'auto-enrollment failed; commissioned without it');
      return undefined;
    }
  }
}
