import { useEffect, useRef, useState } from 'preact/hooks';
import type { DeviceRecordType, EnrollmentType, ProgramType } from '@efs/api';
import { ApiError, type PortalApi } from '../api.ts';
import { commitmentText, EnrollmentStatusText, money, monthsText, SiteFieldLabel } from '../format.ts';
import { renderMarkdown } from '../markdown.ts';
import type { Query } from './useQuery.ts';
import { Badge, Fact, FieldError, LoadError } from './ui.tsx';

const deviceName = (d: DeviceRecordType) => {
  const product = [d.manufacturer_name, d.product_name].filter(Boolean).join(' ');
  const kind = d.type === 'BATTERY' ? 'battery' : 'EV charger';
  return product ? `${product} (${kind})` : `${kind[0]!.toUpperCase()}${kind.slice(1)} ${d.id}`;
};

export interface ProgramsProps {
  api: PortalApi;
  programs: Query<ProgramType[]>;
  devices: Query<DeviceRecordType[]>;
  /** The site's current (PENDING, NEEDS_ACTION, ACTIVE) enrollments. */
  enrollments: EnrollmentType[];
  siteComplete: boolean;
  onEnrolled: (message: string) => Promise<void>;
  onNeedSite: () => void;
}

/** The programs the site is eligible for, with what each pays and asks, and enrolling in one. */
export function ProgramsSection(props: ProgramsProps) {
  const { programs } = props;
  const incomplete = programs.error?.code === 'SITE_INFO_INCOMPLETE';
  return (
    <section class="section" aria-labelledby="programs-title">
      <h2 id="programs-title">Programs for your home</h2>
      {programs.isPending ? <p>Loading programs…</p> : null}
      {incomplete ? <p class="message warn">Add your home’s address to see the programs you can join.</p> : null}
      {programs.error && !incomplete && !programs.data ? <LoadError what="Programs" error={programs.error} onRetry={() => void programs.refetch()} /> : null}
      {programs.data && programs.data.length === 0 ? <p>No program is available for your home yet.</p> : null}
      {(programs.data ?? []).map((p) => (
        <ProgramCard key={p.id} program={p} {...props} />
      ))}
    </section>
  );
}

function ProgramCard({ program: p, api, devices, enrollments, siteComplete, onEnrolled, onNeedSite }: ProgramsProps & { program: ProgramType }) {
  const [open, setOpen] = useState(false);
  const current = enrollments.filter((e) => e.program_id === p.id);
  const titleId = `program-${p.id}`;
  return (
    <article class="card" aria-labelledby={titleId}>
      <h3 id={titleId}>{p.name}</h3>
      {p.description ? <p>{p.description}</p> : null}
      <dl class="facts">
        <Fact label="Upfront earnings">{money(p.earnings_for_site_upfront)}</Fact>
        <Fact label="Yearly earnings">{money(p.earnings_for_site_yearly)}</Fact>
        <Fact label="Active months">{monthsText(p.participation_months)}</Fact>
        <Fact label="Minimum commitment">{commitmentText(p.minimum_commitment_months)}</Fact>
        {p.eligible_device_types.includes('BATTERY') ? (
          <Fact label="Battery reserve kept in events">{p.minimum_reserve_percentage} %</Fact>
        ) : null}
      </dl>
      {current.length > 0 ? (
        <p>
          Your enrollment: <Badge tone={current.some((e) => e.status === 'ACTIVE') ? 'good' : 'wait'}>{current.map((e) => EnrollmentStatusText[e.status]).join(', ')}</Badge>
        </p>
      ) : open ? (
        <EnrollForm api={api} program={p} devices={devices.data ?? []} siteComplete={siteComplete} onNeedSite={onNeedSite} onClose={() => setOpen(false)} onEnrolled={onEnrolled} />
      ) : (
        <button type="button" class="btn" onClick={() => setOpen(true)}>
          Enroll<span class="visually-hidden"> in {p.name}</span>
        </button>
      )}
    </article>
  );
}

type FormErrors = Record<string, string>;

function EnrollForm({
  api,
  program: p,
  devices,
  siteComplete,
  onNeedSite,
  onClose,
  onEnrolled,
}: {
  api: PortalApi;
  program: ProgramType;
  devices: DeviceRecordType[];
  siteComplete: boolean;
  onNeedSite: () => void;
  onClose: () => void;
  onEnrolled: (message: string) => Promise<void>;
}) {
  const eligible = devices.filter((d) => p.eligible_device_types.includes(d.type));
  const [chosen, setChosen] = useState<Set<string>>(() => new Set(eligible.map((d) => d.id)));
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [agreed, setAgreed] = useState(false);
  const [errors, setErrors] = useState<FormErrors>({});
  const [formError, setFormError] = useState<{ text: string; needSite?: boolean } | undefined>();
  const [sending, setSending] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const base = `enroll-${p.id}`;
  const terms = p.terms_and_conditions_text;

  const focusError = (keys: string[]) => {
    const first = keys[0];
    if (first) form.current?.querySelector<HTMLElement>(`[data-field="${first}"]`)?.focus();
  };

  const submit = async (ev: Event) => {
    ev.preventDefault();
    const found: FormErrors = {};
    if (chosen.size === 0) found.devices = 'Choose at least one device.';
    for (const item of p.enrollment_form) {
      const v = (answers[item.name] ?? '').trim();
      if (v === '') found[item.name] = item.type === 'boolean' ? 'Choose yes or no.' : `Enter your ${item.label.toLowerCase()}.`;
    }
    if (terms && !agreed) found.terms = 'Agree to the terms and conditions to enroll.';
    setErrors(found);
    if (Object.keys(found).length > 0) {
      setFormError({ text: 'Some answers are missing.' });
      return focusError(Object.keys(found));
    }
    setFormError(undefined);
    setSending(true);
    try {
      await api.enroll({
        program_id: p.id,
        device_ids: [...chosen],
        program_specific_attributes: p.enrollment_form.map((item) => ({ name: item.name, value: (answers[item.name] ?? '').trim() })),
        ...(terms ? { has_agreed_to_terms_and_conditions: true, terms_and_conditions_version: p.terms_and_conditions_version } : {}),
      });
      await onEnrolled(`You asked to join ${p.name}. The utility reviews your enrollment; its status shows under Your enrollments.`);
    } catch (err) {
      if (!(err instanceof ApiError)) return setFormError({ text: 'The enrollment could not be sent. Try again.' });
      const fieldErrors: FormErrors = {};
      for (const i of err.body.errors) {
        const name = i.path.replace(/^program_specific_attributes\//, '');
        if (p.enrollment_form.some((f) => f.name === name)) fieldErrors[name] = i.message;
        if (i.path.startsWith('has_agreed') || i.path.startsWith('terms_and_conditions')) fieldErrors.terms = i.message;
      }
      setErrors(fieldErrors);
      if (err.code === 'SITE_INFO_INCOMPLETE') {
        const missing = err.body.errors.map((i) => SiteFieldLabel[i.path] ?? i.path).join(', ');
        setFormError({ text: `Complete your details first${missing ? ` (missing: ${missing})` : ''}.`, needSite: true });
      } else if (err.code === 'CONFLICT') setFormError({ text: 'These devices are already enrolled in this program.' });
      else if (err.code === 'TERMS_NOT_ACCEPTED') setFormError({ text: 'The terms have changed: read them again and agree to enroll.' });
      else setFormError({ text: err.message });
      focusError(Object.keys(fieldErrors));
    } finally {
      setSending(false);
    }
  };

  const describedBy = (...ids: (string | false | undefined)[]) => ids.filter(Boolean).join(' ') || undefined;
  return (
    <form ref={form} class="form enroll" noValidate onSubmit={submit} aria-labelledby={`${base}-title`}>
      <h4 id={`${base}-title`} tabIndex={-1} ref={heading}>
        Enroll in {p.name}
      </h4>
      {!siteComplete ? (
        <p class="message warn">
          Complete your details before you enroll.{' '}
          <button type="button" class="link" onClick={onNeedSite}>
            Complete your details
          </button>
        </p>
      ) : null}
      {terms ? (
        <div class="terms" role="region" tabIndex={0} aria-label={`Terms and conditions of ${p.name}`} dangerouslySetInnerHTML={{ __html: renderMarkdown(terms) }} />
      ) : null}

      <fieldset class="field" aria-describedby={describedBy(errors.devices && `${base}-devices-error`)}>
        <legend>Devices to enroll</legend>
        {eligible.length === 0 ? <p>None of your devices can join this program.</p> : null}
        {eligible.map((d, i) => (
          <label class="check" key={d.id}>
            <input
              type="checkbox"
              data-field={i === 0 ? 'devices' : undefined}
              checked={chosen.has(d.id)}
              onChange={(ev) => {
                const on = (ev.currentTarget as HTMLInputElement).checked;
                setChosen((s) => {
                  const next = new Set(s);
                  if (on) next.add(d.id);
                  else next.delete(d.id);
                  return next;
                });
              }}
            />{' '}
            {deviceName(d)}
          </label>
        ))}
        <FieldError id={`${base}-devices-error`} message={errors.devices} />
      </fieldset>

      {p.enrollment_form.map((item) => {
        const id = `${base}-${item.name}`;
        const hint = item.hint ? `${id}-hint` : undefined;
        const error = errors[item.name] ? `${id}-error` : undefined;
        const set = (v: string) => setAnswers((a) => ({ ...a, [item.name]: v }));
        const hintBlock = item.hint ? <div id={`${id}-hint`} class="hint" dangerouslySetInnerHTML={{ __html: renderMarkdown(item.hint, 6) }} /> : null;
        if (item.type === 'boolean') {
          return (
            <fieldset class="field" key={item.name} aria-describedby={describedBy(hint, error)}>
              <legend>{item.label}</legend>
              {hintBlock}
              {['true', 'false'].map((v, i) => (
                <label class="check" key={v}>
                  <input type="radio" name={id} value={v} data-field={i === 0 ? item.name : undefined} checked={answers[item.name] === v} onChange={() => set(v)} /> {v === 'true' ? 'Yes' : 'No'}
                </label>
              ))}
              <FieldError id={`${id}-error`} message={errors[item.name]} />
            </fieldset>
          );
        }
        return (
          <div class="field" key={item.name}>
            <label for={id}>{item.label}</label>
            {hintBlock}
            <input
              id={id}
              data-field={item.name}
              type="text"
              inputMode={item.type === 'number' ? 'decimal' : 'text'}
              required
              aria-invalid={error ? 'true' : undefined}
              aria-describedby={describedBy(hint, error)}
              value={answers[item.name] ?? ''}
              onInput={(ev) => set((ev.currentTarget as HTMLInputElement).value)}
            />
            <FieldError id={`${id}-error`} message={errors[item.name]} />
          </div>
        );
      })}

      {p.minimum_commitment_months ? (
        <p class="message info">
          This program asks you to stay enrolled for at least {commitmentText(p.minimum_commitment_months)} once it is approved; you cannot unenroll before then.
        </p>
      ) : null}
      {terms ? (
        <div class="field">
          <label class="check">
            <input
              type="checkbox"
              data-field="terms"
              required
              checked={agreed}
              aria-invalid={errors.terms ? 'true' : undefined}
              aria-describedby={describedBy(errors.terms && `${base}-terms-error`)}
              onChange={(ev) => setAgreed((ev.currentTarget as HTMLInputElement).checked)}
            />{' '}
            I have read and agree to the terms and conditions
          </label>
          <FieldError id={`${base}-terms-error`} message={errors.terms} />
        </div>
      ) : null}
      {formError ? (
        <div class="message error" role="alert">
          <p>{formError.text}</p>
          {formError.needSite ? (
            <button type="button" class="btn secondary" onClick={onNeedSite}>
              Complete your details
            </button>
          ) : null}
        </div>
      ) : null}
      <div class="actions">
        <button type="submit" class="btn" disabled={sending || eligible.length === 0}>
          {sending ? 'Enrolling…' : 'Enroll'}
        </button>
        <button type="button" class="btn secondary" onClick={onClose}>
          Not now
        </button>
      </div>
    </form>
  );
}
