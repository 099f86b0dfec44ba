import { useState } from 'preact/hooks';
import type { ProgramType, SiteEventType } from '@efs/api';
import { ApiError, type PortalApi } from '../api.ts';
import { eventReserve, isModifiable, splitEvents } from '../events.ts';
import { dateTimeText, durationText, EventStatusText, ModeText } from '../format.ts';
import type { Query } from './useQuery.ts';
import { Alert, Badge, FieldError, LoadError } from './ui.tsx';

/**
 * Demand-response events of the site: upcoming and running ones with opting out and the reserve
 * for that event only, past ones as a record. A service without the event API (404) says so.
 */
export function EventsSection({ api, events, programs, onChanged }: { api: PortalApi; events: Query<SiteEventType[]>; programs: Map<string, ProgramType>; onChanged: (message: string) => Promise<void> }) {
  const unavailable = events.error?.status === 404 && !events.data;
  const { upcoming, past } = splitEvents(events.data ?? []);
  return (
    <section class="section" aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      {events.isPending ? <p>Loading events…</p> : null}
      {unavailable ? <p class="message info">Events are not available on this service yet. When they are, your utility’s events show here.</p> : null}
      {events.error && !unavailable && !events.data ? <LoadError what="Events" error={events.error} onRetry={() => void events.refetch()} /> : null}
      {events.data && events.data.length === 0 ? <p>No events yet. When your utility schedules an event for your home, it shows here.</p> : null}
      {upcoming.length > 0 ? (
        <>
          <h3>Upcoming and in progress</h3>
          {upcoming.map((e) => (
            <EventCard key={e.id} api={api} event={e} program={programs.get(e.program_id)} onChanged={onChanged} />
          ))}
        </>
      ) : null}
      {past.length > 0 ? (
        <>
          <h3>Past events</h3>
          {past.map((e) => (
            <EventCard key={e.id} api={api} event={e} program={programs.get(e.program_id)} onChanged={onChanged} />
          ))}
        </>
      ) : null}
    </section>
  );
}

function EventCard({ api, event: e, program, onChanged }: { api: PortalApi; event: SiteEventType; program: ProgramType | undefined; onChanged: (message: string) => Promise<void> }) {
  const [sending, setSending] = useState(false);
  const [error, setError] = useState('');
  const [reserveError, setReserveError] = useState('');
  const set = eventReserve(e);
  const [reserve, setReserve] = useState(set === null ? '' : String(set));
  const modifiable = isModifiable(e);
  const min = program?.minimum_reserve_percentage ?? 0;
  const base = `event-${e.id}`;
  const name = program?.name ?? 'Program';
  const modes = [...new Set(e.schedule.map((s) => ModeText[s.mode] ?? s.mode))];
  const effective = [...new Set(e.device_settings.map((d) => d.effective_backup_reserve_percentage))];

  const change = async (patch: Parameters<PortalApi['updateEvent']>[1], done: string) => {
    setSending(true);
    setError('');
    setReserveError('');
    try {
      await api.updateEvent(e.id, patch);
      await onChanged(done);
    } catch (err) {
      if (!(err instanceof ApiError)) setError('That did not work. Try again.');
      else if (err.code === 'EVENT_NOT_MODIFIABLE') setError('This event can no longer be changed.');
      else if (err.code === 'VALIDATION_ERROR' && 'backup_reserve_percentage' in patch) setReserveError(err.message);
      else setError(err.message);
    } finally {
      setSending(false);
    }
  };

  const saveReserve = (ev: Event) => {
    ev.preventDefault();
    const n = Number(reserve);
    if (reserve.trim() === '' || !Number.isInteger(n) || n < min || n > 100) {
      setReserveError(`Enter a whole number from ${min} to 100.`);
      return;
    }
    void change({ backup_reserve_percentage: n }, `The battery keeps at least ${n} % during the ${name} event.`);
  };

  return (
    <article class="card" aria-labelledby={`${base}-title`}>
      <h4 id={`${base}-title`}>
        {name}: {dateTimeText(e.starts_at)}
      </h4>
      <p>
        <Badge tone={e.status === 'CANCELED' ? 'neutral' : e.status === 'IN_PROGRESS' ? 'wait' : 'good'}>{EventStatusText[e.status] ?? e.status}</Badge>{' '}
        {e.is_participating ? <Badge tone="good">You take part</Badge> : <Badge tone="bad">You opted out</Badge>}
      </p>
      <p class="meta">
        {durationText(e.duration_s)}, until {dateTimeText(e.ends_at)}
        {modes.length > 0 ? `. ${modes.join(', ')}` : ''}
        {effective.length > 0 ? `. Battery reserve: ${effective.join(', ')} %` : ''}
      </p>
      {modifiable ? (
        <>
          {e.is_participating ? (
            <button type="button" class="btn secondary" disabled={sending} onClick={() => change({ is_participating: false }, `You opted out of the ${name} event.`)}>
              Opt out of this event
            </button>
          ) : (
            <button type="button" class="btn secondary" disabled={sending} onClick={() => change({ is_participating: true }, `You take part in the ${name} event again.`)}>
              Take part in this event
            </button>
          )}
          {e.is_participating ? (
            <form class="form reserve" noValidate onSubmit={saveReserve}>
              <div class="field">
                <label for={`${base}-reserve`}>Battery reserve for this event (%)</label>
                <p id={`${base}-reserve-hint`} class="hint">
                  The lowest charge your battery keeps during this event, from {min} to 100. Leave empty for the usual level.
                </p>
                <input
                  id={`${base}-reserve`}
                  type="number"
                  inputMode="numeric"
                  min={min}
                  max={100}
                  step={1}
                  value={reserve}
                  aria-invalid={reserveError ? 'true' : undefined}
                  aria-describedby={`${base}-reserve-hint${reserveError ? ` ${base}-reserve-error` : ''}`}
                  onInput={(ev) => setReserve((ev.currentTarget as HTMLInputElement).value)}
                />
                <FieldError id={`${base}-reserve-error`} message={reserveError} />
              </div>
              <div class="actions">
                <button type="submit" class="btn" disabled={sending}>
                  Save reserve
                </button>
                {set !== null ? (
                  <button type="button" class="btn secondary" disabled={sending} onClick={() => (setReserve(''), change({ backup_reserve_percentage: null }, `The ${name} event uses your usual battery reserve.`))}>
                    Use the usual level
                  </button>
                ) : null}
              </div>
            </form>
          ) : null}
        </>
      ) : null}
      <Alert message={error} />
    </article>
  );
}
