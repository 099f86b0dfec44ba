import { encodeCursor } from './cursor.ts';
import type { StoredReading } from './reading.ts';
import { toTelemetryRow, type TelemetryPageType } from '@efs/api';

/** A page from `limit + 1` rows read: the extra row only says that there is a next page. */
export function pageOf(rows: readonly StoredReading[], limit: number): TelemetryPageType {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return { rows: shown.map(toTelemetryRow), next_cursor: rows.length > limit && last ? encodeCursor(last) : null };
}
