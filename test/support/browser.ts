import playwright from 'playwright-core';
import type { Browser } from 'playwright-core';

// Debian's chromium (.ci/run installs it when missing); Playwright drives it, it downloads nothing.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless Chromium as every browser test runs it. */
export function launchChromium(): Promise<Browser> {
  return playwright.chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // This machine's network is closed: no background connections, no QUIC, no sandbox as root.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
