import { CommandMessageFields } from './entities/command.ts';
import { EventMessageFields } from './entities/event.ts';
import { SettingsRequestMessageFields } from './entities/settingsRequest.ts';
import { avroRecord, recordType } from './fields.ts';
import { defineTopic } from './topic.ts';

/**
 * A change of a demand-response event, keyed by event id: its creation, each status it reaches
 * (by time: IN_PROGRESS, COMPLETED) and its cancellation, with the event as the utility API shows
 * it plus its utility, so that webhooks need no read-through.
 */
export const DemandResponseEventSchema = avroRecord(recordType('DemandResponseEvent', 'efs.dispatch', EventMessageFields));

/**
 * A change of a command, keyed by device (`<integrator_id>/<site_id>/<device_id>`, so one
 * device's commands stay in order): created, updated (acknowledgement, opt-out, reserve),
 * canceled, and started / ended at their times; the command as the API shows it plus its tenancy.
 */
export const CommandSchema = avroRecord(recordType('Command', 'efs.dispatch', CommandMessageFields));

/**
 * A settings request (the end user's setting for a device, for its cloud to apply), keyed by
 * device so one device's requests stay in order: created (settings.apply) and updated (APPLIED or
 * FAILED). Commissioning shows an APPLIED level on the device.
 */
export const SettingsRequestSchema = avroRecord(recordType('SettingsRequest', 'efs.dispatch', SettingsRequestMessageFields));

export const DemandResponseEventsTopic = defineTopic({ name: 'efs.dispatch.events', kind: 'event', partitions: 6, schema: DemandResponseEventSchema, fields: EventMessageFields });
export const CommandsTopic = defineTopic({ name: 'efs.dispatch.commands', kind: 'event', partitions: 6, schema: CommandSchema, fields: CommandMessageFields });
export const SettingsRequestsTopic = defineTopic({ name: 'efs.dispatch.settings', kind: 'event', partitions: 6, schema: SettingsRequestSchema, fields: SettingsRequestMessageFields });
