import { z } from 'zod';

/** The specification's error body (every error answer of every listener). */
export const ErrorBodySchema = z
  .object({
    code: z.string(),
    message: z.string(),
    status_code: z.number().int(),
    detail: z.array(z.object({ loc: z.array(z.string()), msg: z.string(), type: z.string() })),
    errors: z.array(z.object({ message: z.string(), path: z.string() })),
  })
  .meta({ id: 'Error' });

export const DeviceType = z.enum(['BATTERY', 'EV_CHARGER']).meta({ id: 'DeviceType' });
export type DeviceTypeType = z.infer<typeof DeviceType>;

/** `skip` and `limit` of every list endpoint (decisions.md, Lists). */
export const Pagination = z.object({
  skip: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const DateTime = z.string().datetime({ offset: true });
