import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api.ts';

/** A failed load, said plainly, with a way to try again. */
export function LoadError({ what, error, onRetry }: { what: string; error: ApiError; onRetry: () => void }) {
  return (
    <div class="message error" role="alert">
      <p>
        {what} could not be loaded: {error.message}
      </p>
      <button type="button" class="btn secondary" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}

export function Badge({ tone, children }: { tone: 'good' | 'wait' | 'bad' | 'neutral'; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

/** A message under a form control, announced with it (the control names it in aria-describedby). */
export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  return message ? (
    <p id={id} class="field-error">
      {message}
    </p>
  ) : null;
}

/** A failure of what the user just did, announced at once. */
export function Alert({ message }: { message: string | undefined }) {
  return message ? (
    <p class="message error" role="alert">
      {message}
    </p>
  ) : null;
}

/** One term and its value in a description list. */
export function Fact({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
