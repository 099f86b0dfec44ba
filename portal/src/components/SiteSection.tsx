import { useEffect, useRef, useState } from 'preact/hooks';
import type { SiteRecordType, SiteUpdateType } from '@efs/api';
import { missingSiteFields, STATE_CODES } from '@efs/api/siteRules';
import { ApiError, type PortalApi } from '../api.ts';
import { SiteFieldLabel } from '../format.ts';
import type { Query } from './useQuery.ts';
import { Alert, Fact, FieldError, LoadError } from './ui.tsx';

type FieldName = 'first_name' | 'last_name' | 'company_name' | 'email' | 'street_address' | 'street_address2' | 'city' | 'state_code' | 'zip_code';

interface FieldSpec {
  name: FieldName;
  autocomplete: string;
  type?: 'email';
  inputMode?: 'numeric';
  optional?: boolean;
  hint?: string;
}

const FIELDS: FieldSpec[] = [
  { name: 'first_name', autocomplete: 'given-name' },
  { name: 'last_name', autocomplete: 'family-name' },
  { name: 'company_name', autocomplete: 'organization', optional: true, hint: 'Only if the account is a business; first and last name are then optional.' },
  { name: 'email', autocomplete: 'email', type: 'email' },
  { name: 'street_address', autocomplete: 'address-line1' },
  { name: 'street_address2', autocomplete: 'address-line2', optional: true },
  { name: 'city', autocomplete: 'address-level2' },
  { name: 'state_code', autocomplete: 'address-level1' },
  { name: 'zip_code', autocomplete: 'postal-code', inputMode: 'numeric', hint: 'Five digits, or ZIP+4 such as 88801-1234.' },
];

type Values = Record<FieldName, string>;

const valuesOf = (site: SiteRecordType): Values => Object.fromEntries(FIELDS.map((f) => [f.name, site[f.name] ?? ''])) as Values;

/** The site's details: a summary when complete, otherwise (or on request) the form that completes them. */
export function SiteSection({ api, site, editRequest, onSaved }: { api: PortalApi; site: Query<SiteRecordType>; editRequest: number; onSaved: (message: string) => Promise<void> }) {
  const [editing, setEditing] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (editRequest > 0) {
      setEditing(true);
      heading.current?.focus();
    }
  }, [editRequest]);

  const missing = site.data ? missingSiteFields(site.data) : [];
  const showForm = site.data !== undefined && (editing || missing.length > 0);
  return (
    <section class="section" id="site" aria-labelledby="site-title">
      <h2 id="site-title" tabIndex={-1} ref={heading}>
        Your home
      </h2>
      {site.error && !site.data ? <LoadError what="Your details" error={site.error} onRetry={() => void site.refetch()} /> : null}
      {!site.data && !site.error ? <p>Loading your details…</p> : null}
      {site.data && missing.length > 0 ? <p class="message warn">Complete your details to enroll in a program. Still missing: {missing.map((f) => SiteFieldLabel[f] ?? f).join(', ')}.</p> : null}
      {showForm && site.data ? (
        <SiteForm
          api={api}
          site={site.data}
          canCancel={missing.length === 0}
          onCancel={() => setEditing(false)}
          onSaved={async () => {
            setEditing(false);
            await onSaved('Your details are saved.');
            heading.current?.focus();
          }}
        />
      ) : null}
      {site.data && !showForm ? (
        <>
          <SiteSummary site={site.data} />
          <button type="button" class="btn secondary" onClick={() => setEditing(true)}>
            Edit your details
          </button>
        </>
      ) : null}
    </section>
  );
}

function SiteSummary({ site }: { site: SiteRecordType }) {
  const name = [site.first_name, site.last_name].filter(Boolean).join(' ');
  return (
    <dl class="summary">
      <Fact label="Name">{[name, site.company_name].filter(Boolean).join(', ')}</Fact>
      <Fact label="Email">{site.email}</Fact>
      <Fact label="Address">
        {[site.street_address, site.street_address2].filter(Boolean).join(', ')}
        <br />
        {site.city}, {site.state_code} {site.zip_code}
      </Fact>
    </dl>
  );
}

function SiteForm({ api, site, canCancel, onCancel, onSaved }: { api: PortalApi; site: SiteRecordType; canCancel: boolean; onCancel: () => void; onSaved: () => Promise<void> }) {
  const [values, setValues] = useState<Values>(() => valuesOf(site));
  const [errors, setErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [formError, setFormError] = useState('');
  const [saving, setSaving] = useState(false);
  const form = useRef<HTMLFormElement>(null);

  const focusFirst = (names: string[]) => {
    const first = FIELDS.find((f) => names.includes(f.name));
    if (first) form.current?.querySelector<HTMLElement>(`[name="${first.name}"]`)?.focus();
  };

  const submit = async (ev: Event) => {
    ev.preventDefault();
    const trimmed = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v.trim()])) as Values;
    const missing = missingSiteFields(trimmed);
    if (missing.length > 0) {
      setErrors(Object.fromEntries(missing.map((f) => [f, `Enter your ${(SiteFieldLabel[f] ?? f).toLowerCase()}${f === 'first_name' || f === 'last_name' ? ' (or a company name)' : ''}.`])));
      setFormError('Some details are missing.');
      focusFirst(missing);
      return;
    }
    const patch: SiteUpdateType = {};
    for (const f of FIELDS) {
      const before = site[f.name] ?? '';
      if (trimmed[f.name] !== before) (patch as Record<string, string | null>)[f.name] = trimmed[f.name] === '' ? null : trimmed[f.name];
    }
    setErrors({});
    setFormError('');
    setSaving(true);
    try {
      if (Object.keys(patch).length > 0) await api.updateSite(patch);
      await onSaved();
    } catch (err) {
      const e = err instanceof ApiError ? err : undefined;
      const byField = Object.fromEntries((e?.body.errors ?? []).filter((i) => FIELDS.some((f) => f.name === i.path)).map((i) => [i.path, i.message])) as Partial<Record<FieldName, string>>;
      setErrors(byField);
      setFormError(e ? `Your details could not be saved: ${e.message}` : 'Your details could not be saved.');
      focusFirst(Object.keys(byField));
    } finally {
      setSaving(false);
    }
  };

  const companyGiven = values.company_name.trim() !== '';
  return (
    <form ref={form} class="form" noValidate onSubmit={submit} aria-labelledby="site-form-title">
      <h3 id="site-form-title">Your details</h3>
      {FIELDS.map((f) => {
        const id = `site-${f.name}`;
        const required = !f.optional && !((f.name === 'first_name' || f.name === 'last_name') && companyGiven);
        const described = [f.hint ? `${id}-hint` : '', errors[f.name] ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
        const common = {
          id,
          name: f.name,
          required,
          'aria-invalid': errors[f.name] ? ('true' as const) : undefined,
          'aria-describedby': described,
          autoComplete: f.autocomplete,
          value: values[f.name],
          onInput: (ev: Event) => setValues((v) => ({ ...v, [f.name]: (ev.currentTarget as HTMLInputElement).value })),
        };
        return (
          <div class="field" key={f.name}>
            <label for={id}>
              {SiteFieldLabel[f.name]}
              {required ? null : <span class="optional"> (optional)</span>}
            </label>
            {f.hint ? (
              <p id={`${id}-hint`} class="hint">
                {f.hint}
              </p>
            ) : null}
            {f.name === 'state_code' ? (
              <select {...common} onChange={common.onInput}>
                <option value="">Choose a state</option>
                {STATE_CODES.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            ) : f.type === 'email' ? (
              <input {...common} type="email" inputMode="email" />
            ) : (
              <input {...common} type="text" inputMode={f.inputMode} />
            )}
            <FieldError id={`${id}-error`} message={errors[f.name]} />
          </div>
        );
      })}
      <Alert message={formError} />
      <div class="actions">
        <button type="submit" class="btn" disabled={saving}>
          {saving ? 'Saving…' : 'Save your details'}
        </button>
        {canCancel ? (
          <button type="button" class="btn secondary" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
