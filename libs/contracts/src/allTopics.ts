import type { Topic } from './topic.ts';
import { RequestTopics, ReplyTopic } from './envelopes.ts';
import { ProgramsTopic } from './catalog.ts';
import { SitesTopic, DevicesTopic, SupplementsTopic } from './commissioning.ts';
import { CredentialsTopic } from './auth.ts';
import { EnrollmentsTopic, ProgramGroupsTopic } from './enrollment.ts';
import { DemandResponseEventsTopic, CommandsTopic, SettingsRequestsTopic } from './dispatch.ts';
import { ReadingsTopic } from './telemetry.ts';

/** Every topic of the system; the compatibility check and topic creation walk this list. */
export const allTopics: readonly Topic[] = [
  ...Object.values(RequestTopics),
  ReplyTopic,
  ProgramsTopic,
  SitesTopic,
  DevicesTopic,
  SupplementsTopic,
  CredentialsTopic,
  EnrollmentsTopic,
  ProgramGroupsTopic,
  DemandResponseEventsTopic,
  CommandsTopic,
  SettingsRequestsTopic,
  ReadingsTopic,
];
