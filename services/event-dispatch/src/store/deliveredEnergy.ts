import { PERFORMANCE_DEVICES_MAX, TelemetryOperations } from '@efs/api';
import type { Principal } from '@efs/contracts';
import { Errors } from '@efs/errors';
import { call, type Transport } from '@efs/messaging';
import type { Command } from '../domain/command.ts';
import { deliveryQuestion } from '../domain/performance.ts';
import { deviceRef } from './readModelStore.ts';

/** Event-dispatch asking for devices of several integrators at once: internal, acting for none. */
const DISPATCH: Principal = { kind: 'SYSTEM', integrator_id: null, utility_id: null, site_id: null, token_id: null };

/**
 * What devices actually delivered for their commands, asked of telemetry-ingest, which owns the
 * readings (TelemetryOperations.devicePerformance through the typed `call()`): computed from what is stored when
 * asked, so late telemetry shows at the next read. Answers, per device with a participating
 * CHARGE or DISCHARGE command (by `deviceRef`), its energy in watt-hours (null when no telemetry covers its
 * windows). Throws SERVICE_UNAVAILABLE when telemetry-ingest does not answer in time: a figure
 * guessed as "no telemetry" would be a wrong answer, not a degraded one.
 */
export class DeliveredEnergy {
  private readonly transport: Transport;
  private readonly timeoutMs: number;

  constructor(opts: { transport: Transport; timeoutMs: number }) {
    this.transport = opts.transport;
    this.timeoutMs = opts.timeoutMs;
  }

  async of(commands: readonly Command[]): Promise<Map<string, number | null>> {
    const { windows, devices } = deliveryQuestion(commands);
    const out = new Map<string, number | null>();
    if (devices.length === 0) return out;
    const chunks: (typeof devices)[] = [];
    for (let i = 0; i < devices.length; i += PERFORMANCE_DEVICES_MAX) chunks.push(devices.slice(i, i + PERFORMANCE_DEVICES_MAX));
    const answers = await Promise.all(
      chunks.map((chunk) =>
        call(
          this.transport,
          TelemetryOperations.devicePerformance,
          { principal: DISPATCH, body: { windows, devices: chunk.map((d) => ({ integrator_id: d.integrator_id, device_id: d.device_id, windows: d.windows })) } },
          { timeoutMs: this.timeoutMs },
        ),
      ),
    );
    // Answers come in request order, one per device asked about.
    if (answers.some((a, i) => a.devices.length !== chunks[i]!.length)) throw Errors.INTERNAL_ERROR(undefined, { cause: new Error('devicePerformance answered another number of devices than asked') });
    answers.forEach((a, i) => a.devices.forEach((d, j) => out.set(deviceRef(chunks[i]![j]!), d.actual_energy_wh)));
    return out;
  }
}
