// A person in a headless chromium walking a per_user consent: the gateway's
// consent page, then oidc-provider's own sign-in and consent pages (see
// consent-authorization-server.ts).
import { existsSync } from 'node:fs';
import puppeteer from 'puppeteer-core';
import type { Browser, HTTPRequest } from 'puppeteer-core';

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM) && process.env.CI)
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (the per-user tests need it)`);
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/**
 * Opens the consent page at `url`, continues to the authorization server,
 * signs in as `login` and consents. Resolves with the text of the page the
 * browser ends on; with `intercept`, the redirect back to the gateway is
 * stopped and its URL resolved instead. Throws if the consent page does not
 * name `upstream`.
 */
export async function consentInBrowser(
  browser: Browser,
  url: string,
  login: string,
  options: { intercept?: boolean; upstream?: string } = {},
): Promise<string> {
  const context = await browser.createBrowserContext();
  try {
    const page = await context.newPage();
    // With `intercept`, resolved with the URL of the redirect back to the gateway, which is stopped there.
    let onCallback: (url: string) => void = () => {};
    const callback = new Promise<string>((resolve) => (onCallback = resolve));
    if (options.intercept === true) {
      await page.setRequestInterception(true);
      page.on('request', (request: HTTPRequest) => {
        if (request.url().includes('/oauth/upstream/callback')) {
          onCallback(request.url());
          void request.abort();
        } else void request.continue();
      });
    }
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    const upstream = options.upstream ?? 'saas';
    if (!(await page.content()).includes(upstream)) throw new Error(`the consent page does not name "${upstream}"`);
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('#continue')]);
    await page.type('input[name="login"]', login);
    await page.type('input[name="password"]', 'any password');
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('button[type="submit"]')]);
    if (options.intercept === true) {
      await page.click('button[type="submit"]').catch(() => undefined);
      return await callback;
    }
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('button[type="submit"]')]);
    return await page.content();
  } finally {
    await context.close();
  }
}
