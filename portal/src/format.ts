/** How the portal words numbers, dates and states for the end user (US English, US dollars). */
import type { EnrollmentStatusType, EventModeType, EventStatusType } from '@efs/api';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export function money(amount: number): string {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 }).format(amount);
}

/** Calendar months 1–12 as ranges: `May to October`, `December to February`, `All year`. */
export function monthsText(months: readonly number[]): string {
  const set = [...new Set(months.filter((m) => Number.isInteger(m) && m >= 1 && m <= 12))].sort((a, b) => a - b);
  if (set.length === 12) return 'All year';
  if (set.length === 0) return 'None';
  const ranges: [number, number][] = [];
  for (const m of set) {
    const last = ranges.at(-1);
    if (last && last[1] === m - 1) last[1] = m;
    else ranges.push([m, m]);
  }
  // A range running through December into January is one season.
  if (ranges.length > 1 && ranges[0]![0] === 1 && ranges.at(-1)![1] === 12) ranges[0]![0] = ranges.pop()![0];
  const name = (m: number) => MONTHS[m - 1]!;
  return ranges.map(([a, b]) => (a === b ? name(a) : `${name(a)} to ${name(b)}`)).join(', ');
}

/** The program's minimum commitment; null means the program has not announced one. */
export function commitmentText(months: number | null): string {
  if (months === null) return 'None announced';
  if (months === 0) return 'None';
  return months === 1 ? '1 month' : `${months} months`;
}

export function dateText(iso: string): string {
  return new Date(iso).toLocaleDateString('en-US', { year: 'numeric', month: 'long', day: 'numeric' });
}

export function dateTimeText(iso: string): string {
  return new Date(iso).toLocaleString('en-US', { weekday: 'short', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
}

export function durationText(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.round((seconds % 3600) / 60);
  if (h === 0) return `${m} min`;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

export const EnrollmentStatusText: Record<EnrollmentStatusType, string> = {
  PENDING: 'Waiting for approval',
  NEEDS_ACTION: 'Action needed',
  ACTIVE: 'Enrolled',
  REJECTED: 'Not accepted',
  UNENROLLED: 'Ended',
};

export const EventStatusText: Record<EventStatusType, string> = {
  UPCOMING: 'Upcoming',
  IN_PROGRESS: 'In progress',
  COMPLETED: 'Completed',
  CANCELED: 'Canceled',
};

export const ModeText: Record<EventModeType, string> = {
  CHARGE: 'Battery charges',
  DISCHARGE: 'Battery discharges',
  STANDBY: 'Battery on standby',
  BACKUP: 'Battery kept for backup',
  SELF_CONSUMPTION: 'Battery powers your home',
  SAVINGS: 'Battery saves on rates',
};

/** Labels of the site's fields, as the form shows them and as messages name them. */
export const SiteFieldLabel: Record<string, string> = {
  first_name: 'First name',
  last_name: 'Last name',
  company_name: 'Company',
  email: 'Email',
  street_address: 'Street address',
  street_address2: 'Apartment, suite, unit',
  city: 'City',
  state_code: 'State',
  zip_code: 'ZIP code',
};

/** The first ISO date-time in a message (e.g. when unenrolling becomes possible), as a date. */
export function firstDateIn(text: string): string | undefined {
  const m = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})/.exec(text);
  return m ? dateText(m[0]) : undefined;
}
