import { Errors } from '@efs/errors';

/** Where a page of a utility read ended: rows are ordered by start time, then integrator, then device. */
export interface PageCursor {
  start_time: number;
  integrator_id: string;
  device_id: string;
}

/** Opaque to the client: base64url of the position of the page's last row. */
export const encodeCursor = (c: PageCursor): string => Buffer.from(JSON.stringify([c.start_time, c.integrator_id, c.device_id])).toString('base64url');

export function decodeCursor(text: string): PageCursor {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 3 && Number.isFinite(v[0]) && typeof v[1] === 'string' && typeof v[2] === 'string') return { start_time: v[0] as number, integrator_id: v[1], device_id: v[2] };
  } catch {
    /* answered below */
  }
  throw Errors.VALIDATION_ERROR.forField('Invalid body: cursor: not a cursor this endpoint answered', ['cursor']);
}
