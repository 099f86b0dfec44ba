import DOMPurify from 'dompurify';
import { Marked } from 'marked';

/**
 * Markdown a utility wrote (terms and conditions, form hints) turned into HTML that can do
 * nothing but show text: marked renders it (raw HTML passes through), then DOMPurify keeps only
 * text-formatting elements and http(s), mailto and tel links. Scripts, event handlers, styles,
 * forms, frames, images and `javascript:` URLs are removed, whatever the utility wrote; the page's
 * policy (script-src 'self') would refuse them anyway.
 */
const ALLOWED_TAGS = [
  'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'b', 'em', 'i', 'u', 's', 'del', 'ins', 'sub', 'sup', 'small', 'mark',
  'code', 'pre', 'kbd', 'blockquote', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'a', 'abbr', 'table', 'caption', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td',
];
const ALLOWED_ATTR = ['href', 'title', 'start', 'colspan', 'rowspan', 'scope'];
const SAFE_URL = /^(?:https?:|mailto:|tel:|#)/i;

const purifier = DOMPurify(window);
purifier.addHook('afterSanitizeAttributes', (node) => {
  // Links leave the portal's frame in a new tab, telling the target nothing about the page.
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

/** `headingLevel`: the level a `#` heading becomes, so the text fits the page's outline. */
function markedFor(headingLevel: number): Marked {
  return new Marked({
    gfm: true,
    async: false,
    renderer: {
      heading({ tokens, depth }) {
        const level = Math.min(6, depth + headingLevel - 1);
        return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
      },
    },
  });
}

const renderers = new Map<number, Marked>();

export function renderMarkdown(markdown: string, headingLevel = 5): string {
  let m = renderers.get(headingLevel);
  if (!m) renderers.set(headingLevel, (m = markedFor(headingLevel)));
  const html = m.parse(markdown, { async: false });
  return purifier.sanitize(html, { ALLOWED_TAGS, ALLOWED_ATTR, ALLOWED_URI_REGEXP: SAFE_URL, ALLOW_DATA_ATTR: false });
}
