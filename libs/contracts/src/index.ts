export type { AvroType, AvroSchema } from './avroType.ts';
export { defineTopic } from './topic.ts';
export type { Topic, TopicKind, TopicValue } from './topic.ts';
export { Headers } from './headers.ts';
export { deadLetterTopicName, DeadLetterHeaders } from './dlq.ts';
export { RequestTopics, ReplyTopic, replyTopicName } from './envelopes.ts';
export type { RequestTarget } from './envelopes.ts';
export { ProgramsTopic, ProgramSchema, DeviceTypeSchema } from './catalog.ts';
export { allTopics } from './allTopics.ts';
export { CredentialsTopic, CredentialSchema } from './auth.ts';
export { SitesTopic, DevicesTopic, SupplementsTopic, SiteSchema, DeviceSchema, SupplementSchema, siteKey, deviceKey } from './commissioning.ts';
export { EnrollmentsTopic, EnrollmentSchema, EnrollmentStatusSchema, EnrollMethodSchema } from './enrollment.ts';

import type { TopicValue } from './topic.ts';
import type { RequestTopics, ReplyTopic } from './envelopes.ts';
import type { ProgramsTopic } from './catalog.ts';
import type { SitesTopic, DevicesTopic, SupplementsTopic } from './commissioning.ts';
import type { CredentialsTopic } from './auth.ts';
import type { EnrollmentsTopic } from './enrollment.ts';

export type RequestMessage = TopicValue<typeof RequestTopics.catalog>;
export type ReplyMessage = TopicValue<typeof ReplyTopic>;
export type Principal = RequestMessage['principal'];
export type ProgramMessage = TopicValue<typeof ProgramsTopic>;
export type SiteMessage = TopicValue<typeof SitesTopic>;
export type DeviceMessage = TopicValue<typeof DevicesTopic>;
export type SupplementMessage = TopicValue<typeof SupplementsTopic>;
export type CredentialMessage = TopicValue<typeof CredentialsTopic>;
export type EnrollmentMessage = TopicValue<typeof EnrollmentsTopic>;
