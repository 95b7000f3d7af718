import { readFileSync } from 'node:fs';

/**
 * A key variable's PEM: the value itself when it is PEM text, else the file it names. A one-line
 * value with literal `\n` escapes (common in .env files and secret stores) means the PEM with real
 * newlines. Throws with a reason, never the value.
 */
export function pemText(value: string): string {
  let text = value.trim();
  if (!text.startsWith('-----BEGIN')) {
    try {
      text = readFileSync(text, 'utf8').trim();
    } catch (error) {
      throw new Error(`is neither PEM text nor a readable file (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`, { cause: error });
    }
  }
  if (!text.includes('\n') && text.includes('\\n')) text = text.replace(/\\n/g, '\n');
  return text;
}
