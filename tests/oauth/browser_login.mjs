// Headless Chromium as the person at the browser: open the authorization URL, paste the key, allow, and print
// (as JSON on stdout) the redirect the browser was sent to. The redirect itself is answered here, so no server
// needs to listen at the client's redirect URI. Usage: node browser_login.mjs URL KEY REDIRECT_PREFIX SHOT_DIR
import { createRequire } from "node:module";

const [url, key, redirectPrefix, shotDir] = process.argv.slice(2);
const require = createRequire(process.env.PLAYWRIGHT_CORE_DIR + "/");
const { chromium } = require("playwright-core");

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  // A phone-sized viewport: the pages must be usable there.
  const page = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
  let landed = null;
  await page.route((target) => target.href.startsWith(redirectPrefix), async (route) => {
    landed = route.request().url();
    await route.fulfill({ status: 200, contentType: "text/plain", body: "back at the client" });
  });
  await page.goto(url);
  if (shotDir) await page.screenshot({ path: `${shotDir}/login.png`, fullPage: true });
  await page.fill("input[name=api_key]", key);
  await Promise.all([page.waitForLoadState("load"), page.click("button[type=submit]")]);
  await page.waitForSelector("button[value=allow]");
  if (shotDir) await page.screenshot({ path: `${shotDir}/consent.png`, fullPage: true });
  const consentTitle = await page.title();
  await page.click("button[value=allow]");
  await page.waitForFunction(() => document.body.innerText.includes("back at the client"));
  process.stdout.write(JSON.stringify({ landed, consentTitle }) + "\n");
} finally {
  await browser.close();
}
