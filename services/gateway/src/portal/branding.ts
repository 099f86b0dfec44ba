import { z } from 'zod';
import { sourceOf } from './framing.ts';

/** `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa`: nothing else reaches the style sheet. */
const Colour = z.string().regex(/^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i, 'a hex colour such as #0a5cff');

/** An http(s) address, kept in its serialised form (quotes and spaces percent-encoded). */
const AssetUrl = z
  .string()
  .max(2048)
  .transform((v, ctx) => {
    const source = sourceOf(v);
    if (!source) {
      ctx.addIssue({ code: 'custom', message: 'an http or https URL' });
      return z.NEVER;
    }
    // The serialised URL has quotes, spaces and line breaks percent-encoded; a backslash is the one
    // character left that means something inside a CSS string.
    return new URL(v).href.replaceAll('\\', '%5C');
  });

const GENERIC_FAMILIES = new Set(['serif', 'sans-serif', 'monospace', 'cursive', 'fantasy', 'system-ui', 'ui-sans-serif', 'ui-serif', 'ui-monospace', 'ui-rounded']);

/** A font-family list such as `Acme Sans, Helvetica, sans-serif`: names of letters, digits, spaces and dashes. */
const FontFamily = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9 -]*[A-Za-z0-9][A-Za-z0-9 ,-]*$/, 'font names of letters, digits, spaces and dashes, separated by commas');

const families = (list: string) =>
  list
    .split(',')
    .map((f) => f.trim().replace(/\s+/g, ' '))
    .filter(Boolean);

/**
 * An integrator's look, every field optional (the portal's defaults fill the rest): logo, favicon,
 * font (a family list, and optionally the address of a font file for its first family), the
 * primary and secondary buttons' background, border and text colours, and the text colours.
 */
export const BrandingFields = {
  logo_url: AssetUrl,
  favicon_url: AssetUrl,
  font_family: FontFamily,
  font_url: AssetUrl,
  primary_button_background: Colour,
  primary_button_border: Colour,
  primary_button_text: Colour,
  secondary_button_background: Colour,
  secondary_button_border: Colour,
  secondary_button_text: Colour,
  text_color: Colour,
  secondary_text_color: Colour,
};
export const Branding = z.strictObject(BrandingFields).partial();
export type BrandingType = z.infer<typeof Branding>;
export type BrandingField = keyof typeof BrandingFields;
export const BRANDING_FIELDS = Object.keys(BrandingFields) as BrandingField[];

/** The CSS custom properties the portal's style sheet reads (portal/src/styles.css). */
const CssVariables: Partial<Record<BrandingField, string>> = {
  primary_button_background: '--efs-primary-bg',
  primary_button_border: '--efs-primary-border',
  primary_button_text: '--efs-primary-text',
  secondary_button_background: '--efs-secondary-bg',
  secondary_button_border: '--efs-secondary-border',
  secondary_button_text: '--efs-secondary-text',
  text_color: '--efs-text',
  secondary_text_color: '--efs-text-secondary',
};

const quoteFamily = (f: string) => (GENERIC_FAMILIES.has(f.toLowerCase()) ? f : `"${f}"`);

/** The integrator's style sheet: custom properties over the portal's defaults, and its font. */
export function brandingCss(b: BrandingType): string {
  const declarations: string[] = [];
  for (const [field, variable] of Object.entries(CssVariables) as [BrandingField, string][]) {
    const value = b[field];
    if (typeof value === 'string') declarations.push(`  ${variable}: ${value};`);
  }
  const font = b.font_family ? families(b.font_family) : [];
  if (font.length > 0) declarations.push(`  --efs-font: ${[...font.map(quoteFamily), 'system-ui', 'sans-serif'].join(', ')};`);
  const rules = [`:root {\n${declarations.join('\n')}\n}`];
  if (b.font_url && font.length > 0) rules.push(`@font-face {\n  font-family: ${quoteFamily(font[0]!)};\n  src: url("${b.font_url}");\n  font-display: swap;\n}`);
  return `${rules.join('\n')}\n`;
}

/** Origins the page must be allowed to load the branding's images and font from. */
export function brandingSources(b: BrandingType): { images: string[]; fonts: string[] } {
  const origins = (...urls: (string | undefined)[]) => urls.map(sourceOf).filter((s): s is string => s !== undefined);
  return { images: origins(b.logo_url, b.favicon_url), fonts: origins(b.font_url) };
}
