import { z } from 'zod';
import { DeviceTypes } from '@efs/contracts';
import { DateTime, namedEnum } from './fields.ts';

/** The specification's error body (every error answer of every listener), kept with the error catalogue. */
export { ErrorBodySchema } from '@efs/errors';

export const DeviceType = namedEnum(DeviceTypes);
export type DeviceTypeType = z.infer<typeof DeviceType>;

/** `skip` and `limit` of every list endpoint (decisions.md, Lists). */
export const Pagination = z.object({
  skip: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export { DateTime };

/**
 * A query parameter that may be given once or repeated (`?status=A&status=B`), always read as a
 * list; `max`, if given, bounds how often.
 */
export const repeatable = <T extends z.ZodType>(item: T, max?: number) =>
  z.union([item, max === undefined ? z.array(item) : z.array(item).max(max)]).transform((v) => (Array.isArray(v) ? v : [v]) as z.infer<T>[]);
