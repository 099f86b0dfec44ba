import { describe, expect, it } from 'vitest';
import { Branding, brandingCss, brandingSources } from '../src/portal/branding.ts';
import { frameAncestors, parseFrameOrigins, portalPagePolicy } from '../src/portal/framing.ts';

describe('frame origins', () => {
  it('accepts origins (scheme, host or *.host or IP, optional port) and normalises them', () => {
    expect(parseFrameOrigins(['https://App.Acme.com/', 'https://*.acme.com', 'http://127.0.0.2:5173', 'https://app.acme.com', 'http://[::1]:8080', 'https://acme.com:*'])).toEqual({
      ok: true,
      origins: ['https://app.acme.com', 'https://*.acme.com', 'http://127.0.0.2:5173', 'http://[::1]:8080', 'https://acme.com:*'],
    });
  });

  it('refuses anything that is not an origin, or that could add to the policy', () => {
    for (const bad of ['*', "'self'", "'none'", 'app.acme.com', 'ftp://acme.com', 'https://acme.com/path', 'https://acme.com; script-src *', 'https://acme.com https://evil.com', 'https://a.com:99999', 'javascript:alert(1)', 'https://*', 'https://a*.com', '']) {
      expect(parseFrameOrigins([bad]).ok, bad).toBe(false);
    }
  });

  it('turns a policy into the directive: none for an empty list, none at all for any origin', () => {
    expect(frameAncestors({ any: false, origins: [] })).toBe("frame-ancestors 'none'");
    expect(frameAncestors({ any: false, origins: ['https://a.com', 'https://b.com'] })).toBe('frame-ancestors https://a.com https://b.com');
    expect(frameAncestors({ any: true })).toBeUndefined();
  });

  it('lets the page load only its own scripts, styles and API, plus the branding origins for images and fonts', () => {
    const csp = portalPagePolicy({ framing: { any: false, origins: ['https://app.acme.com'] }, imageSources: ['https://cdn.acme.com', 'https://cdn.acme.com'], fontSources: ['https://fonts.acme.com'] });
    expect(csp.split('; ')).toEqual([
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' https://cdn.acme.com data:",
      "font-src 'self' https://fonts.acme.com",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "object-src 'none'",
      'frame-ancestors https://app.acme.com',
    ]);
    expect(portalPagePolicy({ framing: { any: true } })).not.toContain('frame-ancestors');
  });
});

describe('branding', () => {
  it('becomes CSS custom properties over the defaults, with the font family and its file', () => {
    const b = Branding.parse({
      primary_button_background: '#7B1FA2',
      primary_button_text: '#fff',
      secondary_button_border: '#33333380',
      text_color: '#111',
      font_family: 'Acme Sans,  Helvetica , sans-serif',
      font_url: 'https://fonts.acme.com/acme sans.woff2',
      logo_url: 'https://cdn.acme.com/logo.svg',
    });
    expect(brandingCss(b)).toBe(
      ':root {\n  --efs-primary-bg: #7B1FA2;\n  --efs-primary-text: #fff;\n  --efs-secondary-border: #33333380;\n  --efs-text: #111;\n  --efs-font: "Acme Sans", "Helvetica", sans-serif, system-ui, sans-serif;\n}\n' +
        '@font-face {\n  font-family: "Acme Sans";\n  src: url("https://fonts.acme.com/acme%20sans.woff2");\n  font-display: swap;\n}\n',
    );
    expect(brandingSources(b)).toEqual({ images: ['https://cdn.acme.com'], fonts: ['https://fonts.acme.com'] });
    expect(brandingCss({})).toBe(':root {\n\n}\n');
  });

  it('refuses values that could escape into other CSS or load script', () => {
    const bad: Record<string, string[]> = {
      primary_button_background: ['red', 'rgb(0,0,0)', '#12345', '#fff; } body { display:none', 'url(javascript:alert(1))'],
      font_family: ['Acme"; } * { color: red', 'Acme;', 'Acme{', ',', "Acme'"],
      logo_url: ['javascript:alert(1)', 'data:image/svg+xml,<svg onload=alert(1)>', 'logo.png', 'ftp://a.com/x.png'],
      font_url: ['file:///etc/passwd'],
    };
    for (const [field, values] of Object.entries(bad)) for (const v of values) expect(Branding.safeParse({ [field]: v }).success, `${field}=${v}`).toBe(false);
    expect(Branding.safeParse({ unknown_field: '#fff' }).success).toBe(false);
    // Quotes and backslashes in an address cannot end the CSS string they are written into.
    const url = Branding.parse({ font_url: 'https://a.com/x"y\\z.woff2?q="a"', font_family: 'A' }).font_url!;
    expect(url).not.toMatch(/["\\]/);
  });
});
