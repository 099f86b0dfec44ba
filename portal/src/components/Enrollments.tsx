import { useState } from 'preact/hooks';
import type { DeviceRecordType, EnrollmentType, ProgramType } from '@efs/api';
import { ApiError, type PortalApi } from '../api.ts';
import { isCurrent } from '../enrollments.ts';
import { commitmentText, dateText, EnrollmentStatusText, firstDateIn } from '../format.ts';
import type { Query } from './useQuery.ts';
import { Alert, Badge, LoadError } from './ui.tsx';

const tone = (s: EnrollmentType['status']) => (s === 'ACTIVE' ? 'good' : s === 'PENDING' ? 'wait' : s === 'NEEDS_ACTION' || s === 'REJECTED' ? 'bad' : 'neutral');

/** The site's enrollments with their status and its reason; cancelling or ending one. */
export function EnrollmentsSection({
  api,
  enrollments,
  programs,
  devices,
  onChanged,
}: {
  api: PortalApi;
  enrollments: Query<EnrollmentType[]>;
  programs: Map<string, ProgramType>;
  devices: DeviceRecordType[];
  onChanged: (message: string) => Promise<void>;
}) {
  const all = enrollments.data ?? [];
  const current = all.filter(isCurrent);
  const past = all.filter((e) => !isCurrent(e));
  return (
    <section class="section" aria-labelledby="enrollments-title">
      <h2 id="enrollments-title">Your enrollments</h2>
      {enrollments.error && !enrollments.data ? <LoadError what="Your enrollments" error={enrollments.error} onRetry={() => void enrollments.refetch()} /> : null}
      {!enrollments.data && !enrollments.error ? <p>Loading your enrollments…</p> : null}
      {enrollments.data && current.length === 0 ? <p>You are not enrolled in a program yet. Choose one under Programs for your home.</p> : null}
      {current.map((e) => (
        <EnrollmentCard key={e.id} api={api} enrollment={e} program={programs.get(e.program_id)} devices={devices} onChanged={onChanged} />
      ))}
      {past.length > 0 ? (
        <details class="past">
          <summary>Past enrollments ({past.length})</summary>
          {past.map((e) => (
            <EnrollmentCard key={e.id} api={api} enrollment={e} program={programs.get(e.program_id)} devices={devices} onChanged={onChanged} />
          ))}
        </details>
      ) : null}
    </section>
  );
}

function EnrollmentCard({
  api,
  enrollment: e,
  program,
  devices,
  onChanged,
}: {
  api: PortalApi;
  enrollment: EnrollmentType;
  program: ProgramType | undefined;
  devices: DeviceRecordType[];
  onChanged: (message: string) => Promise<void>;
}) {
  const [confirming, setConfirming] = useState(false);
  const [sending, setSending] = useState(false);
  const [error, setError] = useState('');
  const name = program?.name ?? 'A program';
  const active = e.status === 'ACTIVE';
  const cancellable = e.status === 'PENDING' || e.status === 'NEEDS_ACTION';
  const titleId = `enrollment-${e.id}`;
  const deviceNames = e.device_ids.map((id) => devices.find((d) => d.id === id)?.product_name ?? id);

  const leave = async () => {
    setSending(true);
    setError('');
    try {
      await api.unenroll(e.id);
      setConfirming(false);
      await onChanged(active ? `You left ${name}.` : `Your enrollment in ${name} is canceled.`);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'MINIMUM_COMMITMENT_NOT_MET') {
        const from = firstDateIn(err.message);
        setError(`You cannot unenroll yet: ${name} has a minimum commitment of ${commitmentText(program?.minimum_commitment_months ?? null).toLowerCase()}.${from ? ` You can unenroll from ${from}.` : ''}`);
      } else setError(err instanceof ApiError ? err.message : 'That did not work. Try again.');
    } finally {
      setSending(false);
    }
  };

  return (
    <article class="card" aria-labelledby={titleId}>
      <h3 id={titleId}>{name}</h3>
      <p>
        Status: <Badge tone={tone(e.status)}>{EnrollmentStatusText[e.status] ?? e.status}</Badge>
      </p>
      {e.status_reason ? <p class="reason">Reason: {e.status_reason}</p> : null}
      {e.status === 'NEEDS_ACTION' ? <p class="message warn">The utility needs more from you: update your details below, or contact your installer.</p> : null}
      <p class="meta">
        {e.enrolled_at ? `Enrolled on ${dateText(e.enrolled_at)}. ` : ''}
        {e.unenrolled_at ? `Ended on ${dateText(e.unenrolled_at)}. ` : ''}
        Devices: {deviceNames.join(', ')}
      </p>
      {(active || cancellable) && !confirming ? (
        <button type="button" class="btn secondary" onClick={() => setConfirming(true)}>
          {active ? 'Unenroll' : 'Cancel enrollment'}
          <span class="visually-hidden"> from {name}</span>
        </button>
      ) : null}
      {confirming ? (
        <div class="confirm" role="group" aria-labelledby={`${titleId}-confirm`}>
          <p id={`${titleId}-confirm`}>
            {active ? `Leave ${name}?` : `Cancel your enrollment in ${name}?`}
            {active && program?.minimum_commitment_months
              ? ` This program has a minimum commitment of ${commitmentText(program.minimum_commitment_months)} from your enrollment; until it has passed you cannot unenroll, and the utility may charge a penalty when you leave.`
              : ''}
          </p>
          <div class="actions">
            <button type="button" class="btn danger" disabled={sending} onClick={leave}>
              {active ? 'Yes, unenroll' : 'Yes, cancel it'}
            </button>
            <button type="button" class="btn secondary" onClick={() => (setConfirming(false), setError(''))}>
              Keep it
            </button>
          </div>
        </div>
      ) : null}
      <Alert message={error} />
    </article>
  );
}
