import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Marked, type Tokens } from 'marked';
import { REFERENCE_PATH } from '../common/http/error-docs';

/** The pages of docs/ a partner reads, served as HTML under /reference/<name>: what each is, by its file. */
export const REFERENCE_PAGES = {
  errors: { file: 'errors.md', title: 'Error codes' },
  'field-rules': { file: 'field-rules.md', title: 'Field rules' },
  'api-contract': { file: 'api-contract.md', title: 'The API contract and its versions' },
  changelog: { file: 'changelog.md', title: 'Changelog' },
} as const;

export type ReferencePageName = keyof typeof REFERENCE_PAGES;

/** GitHub's anchor for a heading (lower case, punctuation dropped, spaces as `-`): the links the pages already use. */
export function headingAnchor(text: string): string {
  return text
    .toLowerCase()
    .trim()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]);

/**
 * A link between served pages points at the served page (`errors.md#x` → `/reference/errors#x`);
 * a link to any other file of the repository, which the gateway does not serve, is shown as its
 * text only. Web links stay as they are.
 */
function servedHref(href: string): string | undefined {
  if (/^(?:https?:|mailto:|#)/.test(href)) return href;
  const match = /^(?:\.\/)?(?:docs\/)?([a-z-]+)\.md(#.*)?$/.exec(href);
  const name = match && Object.entries(REFERENCE_PAGES).find(([, page]) => page.file === `${match[1]}.md`)?.[0];
  return name ? `${REFERENCE_PATH}/${name}${match[2] ?? ''}` : undefined;
}

const markdown = new Marked({
  gfm: true,
  renderer: {
    heading(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, { tokens, depth, text }: Tokens.Heading): string {
      return `<h${depth} id="${escapeHtml(headingAnchor(text))}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
    },
    link(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, { href, title, tokens }: Tokens.Link): string {
      const inner = this.parser.parseInline(tokens);
      const target = servedHref(href);
      if (target === undefined) return inner;
      return `<a href="${escapeHtml(target)}"${title ? ` title="${escapeHtml(title)}"` : ''}>${inner}</a>`;
    },
  },
});

/** One page as the gateway serves it: the Markdown rendered, in a page with the reference's links and stylesheet. */
export function renderReferencePage(name: ReferencePageName, source: string): string {
  const { title } = REFERENCE_PAGES[name];
  const nav = Object.entries(REFERENCE_PAGES)
    .map(([other, page]) =>
      other === name ? `<strong>${escapeHtml(page.title)}</strong>` : `<a href="${REFERENCE_PATH}/${other}">${escapeHtml(page.title)}</a>`,
    )
    .join(' · ');
  return (
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `<title>${escapeHtml(title)} · Partner gateway</title>\n` +
    `<link rel="stylesheet" href="${REFERENCE_PATH}/reference.css">\n</head>\n<body>\n` +
    `<nav>${nav} · <a href="/docs">API reference (Swagger UI)</a></nav>\n<main>\n${markdown.parse(source, { async: false })}</main>\n</body>\n</html>\n`
  );
}

/** Every page, rendered once from `docsDirectory` (docs/ beside the service: the image copies these files). */
export function loadReferencePages(docsDirectory = join(process.cwd(), 'docs')): ReadonlyMap<ReferencePageName, string> {
  return new Map(
    (Object.keys(REFERENCE_PAGES) as ReferencePageName[]).map((name) => [
      name,
      renderReferencePage(name, readFileSync(join(docsDirectory, REFERENCE_PAGES[name].file), 'utf8')),
    ]),
  );
}

/** The pages' stylesheet: served from the gateway's own origin, as its Content-Security-Policy allows. */
export const REFERENCE_STYLESHEET = `body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem; color: #1a1a1a; }
nav { margin-bottom: 1.5rem; font-size: 0.9rem; }
a { color: #0645ad; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 0.35rem 0.5rem; text-align: left; vertical-align: top; }
code { background: #f3f3f3; padding: 0 0.2rem; border-radius: 3px; overflow-wrap: anywhere; }
pre { background: #f3f3f3; padding: 0.75rem; overflow-x: auto; }
[id] { scroll-margin-top: 0.5rem; }
tr:has(:target), h1:target, h2:target, h3:target { background: #fff4c2; }
@media (max-width: 40rem) {
  table, tbody, tr, td { display: block; }
  thead { display: none; }
  tr { border-bottom: 1px solid #ccc; padding: 0.5rem 0; }
  td { border: none; padding: 0.15rem 0; }
}
`;
