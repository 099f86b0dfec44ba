import { describe, expect, it } from 'vitest';
import type { SiteEventType } from '@efs/api';
import { splitEvents, eventReserve, isModifiable } from './events.ts';
import { commitmentText, durationText, firstDateIn, money, monthsText } from './format.ts';

describe('how the portal words things', () => {
  it('names participation months as seasons, across the new year too', () => {
    expect(monthsText([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])).toBe('All year');
    expect(monthsText([5, 6, 7, 8, 9, 10])).toBe('May to October');
    expect(monthsText([12, 1, 2])).toBe('December to February');
    expect(monthsText([1, 3, 4, 12])).toBe('December to January, March to April');
    expect(monthsText([7])).toBe('July');
    expect(monthsText([])).toBe('None');
  });

  it('words money, commitments and durations', () => {
    expect(money(1250)).toBe('$1,250');
    expect(commitmentText(null)).toBe('None announced');
    expect(commitmentText(0)).toBe('None');
    expect(commitmentText(1)).toBe('1 month');
    expect(commitmentText(12)).toBe('12 months');
    expect(durationText(5400)).toBe('1 h 30 min');
    expect(durationText(1800)).toBe('30 min');
    expect(durationText(7200)).toBe('2 h');
  });

  it('finds the date in the service’s minimum-commitment message', () => {
    expect(firstDateIn('The program has a minimum commitment of 12 months; unenrolling is allowed from 2027-11-23T10:00:00.000Z')).toBe('November 23, 2027');
    expect(firstDateIn('no date here')).toBeUndefined();
  });
});

describe('events as the end user sees them', () => {
  const event = (id: string, status: SiteEventType['status'], starts: string, reserves: (number | null)[] = []): SiteEventType => ({
    id,
    program_id: 'p',
    site_id: 's',
    status,
    starts_at: starts,
    ends_at: starts,
    duration_s: 3600,
    is_participating: true,
    device_settings: reserves.map((r, i) => ({ device_id: `d${i}`, backup_reserve_percentage: r, effective_backup_reserve_percentage: r ?? 20 })),
    schedule: [],
    created_at: starts,
    updated_at: starts,
  });

  it('puts upcoming and running events soonest first, past ones newest first', () => {
    const { upcoming, past } = splitEvents([
      event('late', 'UPCOMING', '2026-12-03T00:00:00Z'),
      event('done-old', 'COMPLETED', '2026-10-01T00:00:00Z'),
      event('now', 'IN_PROGRESS', '2026-11-23T00:00:00Z'),
      event('canceled', 'CANCELED', '2026-11-01T00:00:00Z'),
    ]);
    expect(upcoming.map((e) => e.id)).toEqual(['now', 'late']);
    expect(past.map((e) => e.id)).toEqual(['canceled', 'done-old']);
    expect(isModifiable({ status: 'COMPLETED' })).toBe(false);
  });

  it('reads the event-specific reserve, null when the site set none', () => {
    expect(eventReserve(event('a', 'UPCOMING', '2026-12-01T00:00:00Z', [null, null]))).toBeNull();
    expect(eventReserve(event('a', 'UPCOMING', '2026-12-01T00:00:00Z', [40, 40]))).toBe(40);
  });
});
